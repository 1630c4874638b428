/* Sign in: the token is posted once; the server answers with an HttpOnly session cookie. */
"use strict";

// A path on this server, in plain URL characters only (the server checks the same: agent_k/api/session.py).
const SAME_ORIGIN_PATH = /^\/(?![\/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@\/%?#]*$/;

document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target), error = document.getElementById("login-error");
  const response = await fetch("/ui/session", {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token: form.get("token") }),
  });
  if (response.ok) {
    const next = form.get("next") || "/";
    window.location.href = SAME_ORIGIN_PATH.test(next) ? next : "/";
    return;
  }
  error.textContent = response.status === 401 ? "That is not the token." : `HTTP ${response.status}`;
  error.hidden = false;
});
