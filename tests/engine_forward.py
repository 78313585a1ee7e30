"""Forward a loopback TCP port to the Docker engine's unix socket, so a test can set
`DOCKER_HOST=tcp://127.0.0.1:PORT` and reach the engine as a remote one (no shared socket path,
no bind mounts). Run as `python engine_forward.py PORT SOCKET COUNT_FILE`; it counts the
connections it carried in COUNT_FILE (so a test can tell the engine was reached through it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        if writer.can_write_eof():
            try:
                writer.write_eof()
            except OSError:
                pass


async def serve(port: int, socket: str, counter: Path) -> None:
    count = 0

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        nonlocal count
        count += 1
        counter.write_text(str(count))
        try:
            engine_r, engine_w = await asyncio.open_unix_connection(socket)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pipe(client_r, engine_w), _pipe(engine_r, client_w))
        for w in (client_w, engine_w):
            w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
