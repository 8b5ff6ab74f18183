"""A small ASGI application, served by uvicorn (a real application server)
behind the standalone gate in the tests:

- `/big`: 5 MiB, byte i = (i * 7) % 251, streamed in 64 KiB chunks;
- `/echo` (POST): the body's length and whether byte i = (i * 13) % 251;
- `/ws`: a WebSocket echoing each text message as "echo: TEXT";
- anything else: the request as the application saw it, in JSON (method,
  path, query and headers, repeated ones joined by ", ").
"""

import json

BIG = 5 * 1024 * 1024
CHUNK = 64 * 1024


def pattern(start, n, step):
    return bytes(((start + i) * step) % 251 for i in range(n))


async def lifespan(receive, send):
    while True:
        m = await receive()
        if m["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif m["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def websocket(receive, send):
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while True:
        m = await receive()
        if m["type"] == "websocket.disconnect":
            return
        await send({"type": "websocket.send", "text": "echo: " + (m.get("text") or "")})


async def respond(send, status, body, ctype="application/json"):
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    if scope["type"] == "websocket":
        return await websocket(receive, send)
    path = scope["path"]
    if path == "/big":
        await send({
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/octet-stream"),
                        (b"content-length", str(BIG).encode())],
        })
        for start in range(0, BIG, CHUNK):
            n = min(CHUNK, BIG - start)
            await send({"type": "http.response.body", "body": pattern(start, n, 7),
                        "more_body": start + n < BIG})
        return
    body = b""
    while True:
        m = await receive()
        body += m.get("body", b"")
        if not m.get("more_body"):
            break
    if path == "/echo":
        intact = body == pattern(0, len(body), 13)
        return await respond(send, 200, json.dumps({"length": len(body), "intact": intact}).encode())
    headers = {}
    for k, v in scope["headers"]:
        k, v = k.decode("latin-1"), v.decode("latin-1")
        headers[k] = headers[k] + ", " + v if k in headers else v
    seen = {
        "method": scope["method"],
        "path": path,
        "query": scope["query_string"].decode("latin-1"),
        "headers": headers,
    }
    await respond(send, 200, json.dumps(seen).encode())
