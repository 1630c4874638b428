# syntax=docker/dockerfile:1
# AGENT-K: the API, and workers from the same image (docker-compose.yml). Slim, non-root, with a healthcheck.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY agent_k ./agent_k
RUN python -m venv /opt/agent-k && /opt/agent-k/bin/pip install .

FROM python:3.11-slim
# libgomp1: LightGBM's OpenMP runtime (the slim image lacks it). bubblewrap and libseccomp2: the candidate sandbox.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 agentk \
    && mkdir /data && chown agentk:agentk /data
COPY --from=build /opt/agent-k /opt/agent-k
ENV PATH=/opt/agent-k/bin:$PATH \
    AGENT_K_HOME=/data \
    PYTHONUNBUFFERED=1
USER agentk
WORKDIR /data
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
# Beyond loopback `serve` needs AGENT_K_API_TOKEN; compose passes it.
CMD ["agent-k", "serve", "--host", "0.0.0.0", "--port", "8000", "--no-worker"]
