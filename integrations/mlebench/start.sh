#!/usr/bin/env bash
# AGENT-K as an MLE-bench agent: /home/data in, /home/submission/submission.csv out, within TIME_LIMIT_SECS.
# What the mission did (its events, its solution scripts, its report) goes to LOGS_DIR and CODE_DIR.
set -euo pipefail

export AGENT_K_HOME="${AGENT_DIR}/home"
# The whole limit less a margin for the install's first import and for writing the submission out.
budget=$(( ${TIME_LIMIT_SECS:-86400} - ${AGENT_K_MARGIN_SECS:-120} ))
if [ "${budget}" -lt 10 ]; then budget=10; fi
# A GPU in the container (MLE-bench's container config `"gpus": -1`) is used where torch sees one.

status=0
"${AGENT_DIR}/venv/bin/agent-k" run --data "${AGENT_K_DATA:-/home/data}" --out "${SUBMISSION_DIR:-/home/submission}/submission.csv" \
    --time-budget "${budget}" --json "$@" > "${LOGS_DIR:-/home/logs}/result.json" || status=$?

# The mission's record where MLE-bench extracts it: the submitted solution (a script that runs on its own) and the
# mission's report.
cp "${AGENT_K_HOME}"/missions/*/solution.py "${CODE_DIR:-/home/code}/" 2>/dev/null || true
cp "${AGENT_K_HOME}"/missions/*/report.html "${LOGS_DIR:-/home/logs}/" 2>/dev/null || true
exit "${status}"
