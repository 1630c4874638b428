#!/usr/bin/env bash
# AGENT-K as an MLE-bench agent: /home/data in, /home/submission/submission.csv out, within TIME_LIMIT_SECS.
# What the mission did (its events, its solution scripts, its report) goes to LOGS_DIR and CODE_DIR.
set -euo pipefail

export AGENT_K_HOME="${AGENT_DIR}/home"
# The whole limit less a margin for the install's first import and for writing the submission out.
budget=$(( ${TIME_LIMIT_SECS:-86400} - ${AGENT_K_MARGIN_SECS:-120} ))
if [ "${budget}" -lt 10 ]; then budget=10; fi
# A GPU where the container has one (MLE-bench's container config `"gpus": -1`); the CPU otherwise.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    export AGENT_K_DEVICE="${AGENT_K_DEVICE:-cuda}"
fi

status=0
"${AGENT_DIR}/venv/bin/agent-k" run --data /home/data --out "${SUBMISSION_DIR:-/home/submission}/submission.csv" \
    --time-budget "${budget}" --json "$@" > "${LOGS_DIR:-/home/logs}/result.json" || status=$?

# The mission's record: its solution scripts and its report, where MLE-bench extracts them.
cp -r "${AGENT_K_HOME}"/missions/*/best "${CODE_DIR:-/home/code}/" 2>/dev/null || true
cp "${AGENT_K_HOME}"/missions/*/report.html "${LOGS_DIR:-/home/logs}/" 2>/dev/null || true
exit "${status}"
