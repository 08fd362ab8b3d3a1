"""HTTP to a llama-server: JSON requests, the server-sent-event stream of /completion, and
every way a server can fail turned into one line for the author.

httpx is imported when the first client is made, never by the local path: the app starts
as fast without a server as before.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..core.errors import EngineCrashed, ServerError, ServerUnreachable
from .remote_schema import AnswerMismatch, checked_answer

CONNECT_TIMEOUT_S = 5.0
"""A wrong host or a firewall that drops packets fails within this."""
READ_TIMEOUT_S = 120.0
"""The longest silence allowed between two chunks: a long prefill on a busy server sends
nothing until its first token, so this is generous, but a server that hangs still ends."""
LLAMA_SERVER_PORT = 8080
"""llama-server's port without --port."""
ANSWER_TIMEOUT_S = 10.0
"""The longest wait for the answer to any other request (/tokenize, /props...): llama-server
answers them at once, busy or not, and the app asks some of them while the author types."""


API_KEY_VARIABLE = "LLAMA_API_KEY"
"""The key for a server started with --api-key: the variable llama-server itself reads
for its key, so one export serves both ends on a machine."""
STOP_POLL_S = 0.05
"""How often a silent stream looks whether the author stopped it."""


class RequestRejected(ServerError):
    """The server answered the request with an error of its own (HTTP 4xx or 5xx): it is up,
    and refused this request."""


class NoPieceRefused(RequestRejected):
    """HTTP 500 "unordered_map::at" (libc++ and MSVC word it otherwise, all naming
    unordered_map): llama.cpp met a character its SentencePiece vocabulary has no piece for
    and looked for its bytes among byte tokens it has none of (remote_tokens.py)."""


class ContextExceeded(ServerError):
    """HTTP 400 exceed_context_size_error: the prompt is longer than the server's context."""


class ServerChanged(ServerError, EngineCrashed):
    """The server restarted with another model or context: what the backend learnt at
    connection (the byte tokens it bans, the vocabulary, the context, the model sessions
    record) is wrong now. An EngineCrashed too, so the app connects again, as it reloads
    an engine that died."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float = CONNECT_TIMEOUT_S
    read: float = READ_TIMEOUT_S
    """Between two chunks of a streamed generation."""
    answer: float = ANSWER_TIMEOUT_S
    """For the whole answer to any other request."""


def _hang_up(response: Any) -> None:
    """Shut the stream's socket down from the consumer's thread: the reader's blocked read
    returns (closing the socket alone would not wake it) and closes the response as it
    unwinds; the server sees the client gone, which stops its slot."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


def normalise_url(url: str) -> str:
    """'host:8080' or 'http://host:8080/' -> 'http://host:8080'; ServerError for what is not a URL."""
    from urllib.parse import urlsplit

    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in text):
        raise ServerError(f"server URL '{url}' is not an http:// or https:// address")
    try:
        parts.port  # noqa: B018 - read for its check: a port past 65535 or not a number
    except ValueError:
        raise ServerError(f"server URL '{url}' has no valid port (1-65535)") from None
    return text.rstrip("/")


def _root_of(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(url)._replace(path="", query="", fragment=""))


def _default_port_hint(url: str, reason: str) -> str:
    """A URL without a port reaches port 80 (443), where llama-server never listens unless
    told to: 'gpu-box' refused as though the server were down."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.port is not None or "refused" not in reason.lower():
        return ""
    with_port = urlunsplit(parts._replace(netloc=f"{parts.netloc}:{LLAMA_SERVER_PORT}"))
    return (
        f": the URL gives no port, so {parts.scheme}'s own ({80 if parts.scheme == 'http' else 443}) was tried;"
        f" llama-server listens on {LLAMA_SERVER_PORT} unless started with --port: try {with_port}"
    )


def _without_credentials(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class ServerClient:
    """One llama-server at `url`; every failure is a ServerError naming the URL."""

    def __init__(self, url: str, timeouts: Timeouts = Timeouts()) -> None:
        import httpx  # here: the local path never pays for it

        address = normalise_url(url)
        self.url = _without_credentials(address)
        """The address as messages say it and sessions record it: a user:password@ that a
        reverse proxy in front of the server may ask for is sent (httpx makes it basic
        auth), never written out."""
        self._httpx = httpx
        self._answer_timeout = httpx.Timeout(timeouts.answer, connect=timeouts.connect)
        self._has_key = bool(key := os.environ.get(API_KEY_VARIABLE))
        self._client = httpx.Client(
            base_url=address,
            headers={"Authorization": f"Bearer {key}"} if key else None,
            timeout=httpx.Timeout(timeouts.read, connect=timeouts.connect),
            # A server on this machine must not be sent through a proxy from the environment.
            trust_env=False,
        )

    def close(self) -> None:
        self._client.close()

    # ---- requests ----------------------------------------------------------------------
    def get(self, path: str, *, allow: tuple[int, ...] = ()) -> Any:
        """The JSON of GET `path`; None when the status is one of `allow` (a disabled endpoint)."""
        return self._request("GET", path, None, allow)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._request("POST", path, body, ())

    def _request(self, method: str, path: str, body: dict[str, Any] | None, allow: tuple[int, ...]) -> Any:
        try:
            response = self._client.request(method, path, json=body, timeout=self._answer_timeout)
        except self._httpx.HTTPError as error:
            raise self._failure(error, waited=self._answer_timeout.read) from None
        if response.status_code in allow:
            return None
        if response.status_code >= 400:
            raise self._rejection(response.status_code, response.text, path)
        return self._json(response.text, path)

    def stream(
        self, path: str, body: dict[str, Any], should_stop: Callable[[], bool] = lambda: False
    ) -> Iterator[dict[str, Any]]:
        """The `data:` objects of a server-sent-event response, as they arrive; it ends early,
        dropping the connection, once `should_stop()` says so, even while the server is silent
        (a long prefill sends nothing; a hung server or a lost link may never send again)."""
        chunks: queue.Queue[tuple[str, Any]] = queue.Queue()
        closed = threading.Event()
        responses: list[Any] = []

        def read() -> None:
            try:
                for chunk in self._chunks(path, body, responses, closed):
                    chunks.put(("chunk", chunk))
                chunks.put(("end", None))
            except BaseException as error:  # noqa: BLE001 - handed to the consumer, who raises it
                chunks.put(("end", None) if closed.is_set() else ("error", error))

        reader = threading.Thread(target=read, name="llama-server stream", daemon=True)
        reader.start()
        try:
            while not should_stop():  # between chunks as they flow, and while the server is silent
                try:
                    kind, item = chunks.get(timeout=STOP_POLL_S)
                except queue.Empty:
                    continue
                if kind == "end":
                    return
                if kind == "error":
                    raise item
                yield item
        finally:
            closed.set()
            for response in responses:
                _hang_up(response)

    def _chunks(
        self, path: str, body: dict[str, Any], responses: list[Any], closed: threading.Event
    ) -> Iterator[dict[str, Any]]:
        try:
            with self._client.stream("POST", path, json=body) as response:
                responses.append(response)
                if closed.is_set():  # stopped while the server had not answered yet
                    return
                if response.status_code >= 400:
                    response.read()
                    raise self._rejection(response.status_code, response.text, path)
                for line in response.iter_lines():
                    if line.startswith("error:"):
                        raise self._rejection(500, line[len("error:") :], path)
                    if not line.startswith("data:"):
                        continue
                    payload = line[len("data:") :].strip()
                    if payload == "[DONE]":
                        return
                    chunk = self._json(payload, path)
                    if isinstance(chunk, dict) and "error" in chunk:
                        raise self._rejection(500, payload, path)
                    yield chunk
        except self._httpx.HTTPError as error:
            raise self._failure(error, during_stream=True) from None

    # ---- what went wrong, in one line ----------------------------------------------------
    def _json(self, text: str, path: str) -> Any:
        """The answer to `path`, checked against its declared shape (remote_schema.py): every
        answer passes here, so none of the backend's arithmetic meets a wrong type."""
        try:
            answer = json.loads(text)
        except ValueError:
            raise ServerError(
                f"{self.url} answered {path} with something that is not JSON: is it a llama-server?"
            ) from None
        try:
            return checked_answer(path, answer)
        except AnswerMismatch as mismatch:
            raise ServerError(f"llama-server at {self.url} answered {path} with {mismatch}") from None

    def _failure(self, error: Exception, *, during_stream: bool = False, waited: float | None = None) -> ServerError:
        httpx = self._httpx
        # llama-server speaks plain HTTP unless built with SSL and given a certificate: an
        # https:// URL to it waits for a TLS answer that never comes (a timeout), or reads
        # HTTP as TLS (an SSL error). Both look like a network fault unless said.
        plain = f"try {'http' + self.url[len('https') :]}" if self._tls() else ""
        if isinstance(error, httpx.ConnectTimeout):
            causes = "wrong address, or a firewall" + (f", or it speaks plain HTTP: {plain}" if plain else "")
            return ServerUnreachable(
                f"llama-server at {self.url} did not answer within {self._client.timeout.connect:g} s ({causes})"
            )
        if isinstance(error, httpx.ConnectError) and plain and _ssl_failure(error):
            return ServerError(
                f"llama-server at {self.url} does not answer in TLS ({_reason(error)}): it speaks plain HTTP? {plain}"
            )
        if isinstance(error, httpx.ConnectError):
            return ServerUnreachable(
                f"cannot reach llama-server at {self.url} (is it running? {_reason(error)})"
                + _default_port_hint(self.url, _reason(error))
            )
        if isinstance(error, httpx.ReadTimeout):
            return ServerError(
                f"llama-server at {self.url} went silent for "
                f"{waited if waited is not None else self._client.timeout.read:g} s"
            )
        if during_stream and isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)):
            return ServerError(
                f"llama-server at {self.url} closed the connection mid-generation "
                "(did it restart?); the text so far is kept"
            )
        return ServerError(f"llama-server at {self.url}: {type(error).__name__}: {_reason(error)}")

    def _tls(self) -> bool:
        return self.url.lower().startswith("https://")

    def _rejection(self, status: int, text: str, path: str) -> ServerError:
        try:
            error = json.loads(text).get("error", {})
        except (ValueError, AttributeError):
            error = {}
        if not isinstance(error, dict):
            error = {"message": str(error)}
        if error.get("type") == "exceed_context_size_error":
            n_prompt, n_ctx = error.get("n_prompt_tokens"), error.get("n_ctx")
            sizes = f" ({n_prompt} tokens, context {n_ctx})" if n_prompt and n_ctx else ""
            return ContextExceeded(
                f"the prompt is longer than llama-server's context{sizes}: "
                "start the server with a larger --ctx-size, or shorten the text"
            )
        if status == 401:
            return ServerError(
                f"llama-server at {self.url} wants an API key (it was started with --api-key): "
                + (f"the one in {API_KEY_VARIABLE} is not it" if self._has_key else f"set {API_KEY_VARIABLE} to it")
            )
        if status == 404 and (root := _root_of(self.url)) != self.url:
            # llama-server answers only at its root: a route pasted into --server
            # (/v1, /completion) makes every request a 404 that names no fix.
            return ServerError(
                f"{self.url} has no {path}: --server takes the server's address without a route, try {root}"
            )
        if status == 404 and not error:
            return ServerError(f"{self.url} has no {path}: it is not a llama-server")
        first_line = text.strip().splitlines()[0] if text.strip() else ""
        message = error.get("message") or first_line or "no reason given"
        kind = NoPieceRefused if status == 500 and "unordered_map" in str(message) else RequestRejected
        return kind(f"llama-server at {self.url} refused {path} (HTTP {status}): {message}")


def _ssl_failure(error: BaseException) -> bool:
    """Whether an ssl.SSLError lies under `error` (httpx wraps httpcore's, which wraps it),
    other than a certificate refused: that server does speak TLS."""
    import ssl

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return not isinstance(cause, ssl.SSLCertVerificationError)
        cause = cause.__cause__ or cause.__context__
    return False


def _reason(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__
