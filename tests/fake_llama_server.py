"""A stand-in for llama-server on 127.0.0.1 that answers each route with what a test gives
it: a well-formed answer by default, any route's answer replaced (the wrong types a broken
server or a proxy of another make sends). No model, no binary: it answers at once."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

N_VOCAB = 300
CHUNK_TEXT = ["La", " casa"]


def token_entry(token_id: int, text: str, logprob: float = -0.1) -> dict[str, Any]:
    piece = list(text.encode("utf-8"))
    return {
        "id": token_id,
        "token": text,
        "bytes": piece,
        "logprob": logprob,
        "top_logprobs": [{"id": token_id, "token": text, "bytes": piece, "logprob": logprob}],
    }


def stream_chunks(entries: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A generation as llama-server streams it: a chunk per token, then the final one."""
    entries = entries or [token_entry(10 + index, text) for index, text in enumerate(CHUNK_TEXT)]
    chunks: list[dict[str, Any]] = [
        {"content": "", "tokens_predicted": index + 1, "stop": False, "completion_probabilities": [entry]}
        for index, entry in enumerate(entries)
    ]
    chunks.append(
        {
            "content": "",
            "stop": True,
            "stop_type": "limit",
            "tokens_predicted": len(entries),
            "timings": {
                "cache_n": 0,
                "prompt_n": 3,
                "prompt_ms": 1.0,
                "predicted_ms": 2.0,
                "prompt_per_second": 3000.0,
                "predicted_per_second": 1000.0,
            },
        }
    )
    return chunks


def default_answers() -> dict[str, Any]:
    return {
        "/health": {"status": "ok"},
        "/props": {
            "default_generation_settings": {"n_ctx": 512, "params": {}},
            "total_slots": 1,
            "model_path": "/models/fake.gguf",
            "build_info": "b0-fake",
            "bos_token": "<s>",
            "chat_template": "",
        },
        "/v1/models": {
            "data": [
                {
                    "id": "fake",
                    "meta": {"n_vocab": N_VOCAB, "n_params": 1000, "size": 4000, "n_ctx_train": 512, "n_embd": 8},
                }
            ]
        },
        "/lora-adapters": [],
        "/slots": [{"id": 0, "n_prompt_tokens": 0}],
        "/tokenize": {"tokens": [1, 5, 6]},
        "/detokenize": {"content": "x"},
        "/completion": stream_chunks(),
    }


class FakeLlamaServer:
    """`with FakeLlamaServer(**{"/props": {...}}) as url:` serves the answers given (raw
    text when a string: JSON a real server would never write, such as NaN)."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.answers = {**default_answers(), **(answers or {})}
        self.asked: list[str] = []
        answers_now, asked = self.answers, self.asked

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                if self.command == "POST":
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                asked.append(self.path)
                if self.path not in answers_now:
                    self._send(404, b'{"error": {"code": 404, "message": "File Not Found"}}')
                elif self.path == "/completion":
                    self._stream(answers_now[self.path])
                else:
                    self._send(200, _encoded(answers_now[self.path]))

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, chunks: list[Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(b"data: " + _encoded(chunk) + b"\n\n")
                    self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST = _answer  # noqa: N815 - the names http.server calls

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> str:
        self._thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _encoded(answer: Any) -> bytes:
    return (answer if isinstance(answer, str) else json.dumps(answer)).encode("utf-8")
