"""Client of the kernelrl evaluation service (`kernelrl serve`, docs/service.md).

Only the documented HTTP API is used: POST /v1/evaluations (one job or {"jobs": [...]}),
GET /v1/evaluations/{id}?wait_s=S, GET /v1/batches/{id}?wait_s=S, GET /v1/tasks, GET /healthz.
Standard library only (urllib). Connection errors, 429 and 503 are retried with backoff, honouring
Retry-After, up to `retry_for_s`, as `kernelrl rollout --eval-service` does.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


class ServiceError(RuntimeError):
    """The service refused a request or could not be reached; the message says which and why."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status


Job = Dict[str, Any]
Result = Dict[str, Any]


@dataclass
class ServiceClient:
    """One evaluation service. Thread-safe (every call opens its own connection)."""

    url: str                      # e.g. "http://head:8080"
    token: Optional[str] = None   # a bearer token of the service's --token-file
    timeout_s: float = 120.0      # one HTTP request
    retry_for_s: float = 600.0    # how long to keep retrying 429/503/connection errors
    poll_wait_s: float = 30.0     # wait_s of each long poll (the service caps it at --max-wait-s)

    @staticmethod
    def from_token_file(url: str, token_file: str, **kwargs: Any) -> "ServiceClient":
        """The client with the first token of `token_file` (one per line, # comments)."""
        path = Path(token_file)
        try:
            lines = path.read_text().splitlines()
        except OSError as e:
            raise ServiceError(f"{token_file}: cannot read the token file: {e.strerror}") from e
        tokens = [l.strip() for l in lines if l.strip() and not l.strip().startswith("#")]
        if not tokens:
            raise ServiceError(f"{token_file}: no token in the file")
        return ServiceClient(url, tokens[0].split()[0], **kwargs)  # a server's token file may mark it: TOKEN task_source

    # -- the routes ---------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz")

    def tasks(self) -> Dict[str, Any]:
        return self._request("GET", "/v1/tasks")

    def submit(self, job: Job) -> str:
        """Enqueues one job; returns its id. A job without client_id gets one (retries are idempotent)."""
        return str(self._request("POST", "/v1/evaluations", _with_client_id(job))["id"])

    def submit_batch(self, jobs: Sequence[Job]) -> Dict[str, Any]:
        """Enqueues jobs as one batch; returns {"batch", "ids", "n_existing"}."""
        if not jobs:
            raise ServiceError("submit_batch: no jobs")
        return self._request("POST", "/v1/evaluations", {"jobs": [_with_client_id(j) for j in jobs]})

    def get(self, job_id: str, wait_s: float = 0.0) -> Dict[str, Any]:
        return self._request("GET", f"/v1/evaluations/{job_id}?wait_s={wait_s:g}")

    def wait(self, job_id: str, timeout_s: float = 3600.0) -> Result:
        """The job's result record once it is done (`kernelrl eval --json`'s record, or
        {"could_not_evaluate": MESSAGE}); ServiceError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            view = self.get(job_id, min(self.poll_wait_s, max(0.0, deadline - time.monotonic())))
            if view.get("state") == "done":
                return view["result"]
            if time.monotonic() >= deadline:
                raise ServiceError(f"job {job_id}: not done after {timeout_s:g} s (state {view.get('state')})")

    def wait_batch(self, batch: str, timeout_s: float = 3600.0) -> List[Result]:
        """The batch's results in submission order, once all are done."""
        deadline = time.monotonic() + timeout_s
        while True:
            wait_s = min(self.poll_wait_s, max(0.0, deadline - time.monotonic()))
            view = self._request("GET", f"/v1/batches/{batch}?wait_s={wait_s:g}")
            if view.get("done"):
                return [j["result"] for j in view["jobs"]]
            if time.monotonic() >= deadline:
                raise ServiceError(f"batch {batch}: {view.get('n_done')} of {view.get('n_jobs')} done after {timeout_s:g} s")

    def evaluate(self, jobs: Sequence[Job], timeout_s: float = 3600.0) -> List[Result]:
        """Submits `jobs` as one batch and returns their results in order."""
        if not jobs:
            return []
        return self.wait_batch(self.submit_batch(jobs)["batch"], timeout_s)

    # -- HTTP ---------------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: Optional[Any] = None) -> Dict[str, Any]:
        url = self.url.rstrip("/") + path
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        deadline = time.monotonic() + self.retry_for_s
        pause_s = 0.5
        while True:
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read().decode())
            except urllib.error.HTTPError as e:
                text = e.read().decode(errors="replace")
                message = _error_message(text)
                if e.code in (429, 503) and time.monotonic() < deadline:
                    retry_after = e.headers.get("Retry-After")
                    time.sleep(float(retry_after) if retry_after and retry_after.isdigit() else pause_s)
                    pause_s = min(pause_s * 2, 30.0)
                    continue
                raise ServiceError(f"{method} {url}: HTTP {e.code}: {message}", e.code) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                if time.monotonic() < deadline:
                    time.sleep(pause_s)
                    pause_s = min(pause_s * 2, 30.0)
                    continue
                reason = getattr(e, "reason", e)
                raise ServiceError(f"{method} {url}: cannot reach the service: {reason}") from None


def _with_client_id(job: Job) -> Job:
    if "client_id" in job:
        return dict(job)
    return {**job, "client_id": "py-" + uuid.uuid4().hex}


def _error_message(text: str) -> str:
    try:
        return str(json.loads(text)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return text[:500]
