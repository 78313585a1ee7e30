from taskfoundry.kinds.program.cleanroom import runtime


def test_runtime_files_keep_data_and_drop_code() -> None:
    tar = runtime.runtime_tar(
        {
            "/usr/local/share/figlet/standard.flf": b"flf2a$ 6 5 16 15 11 0 24463\n" + b"$@\n" * 40,
            "/usr/local/share/locale/de/LC_MESSAGES/hello.mo": b"\xde\x12\x04\x95\x00\x00",
            "/usr/local/share/prog/helper.py": b"def main():\n    return 1\n",
            "/usr/local/share/bash-completion/prog": b"#!/bin/bash\ncomplete -F _prog prog\n",
            "/usr/local/share/info/prog.info": b"File: prog.info\n\nint main(void) { return 0; }\n",
            "/usr/local/share/man/man1/prog.1": b".TH PROG 1\n",
        }
    )
    files = runtime.runtime_files(tar)
    assert sorted(files) == [
        "/usr/local/share/figlet/standard.flf",
        "/usr/local/share/locale/de/LC_MESSAGES/hello.mo",
    ]
    assert runtime.runtime_tar(files) == runtime.runtime_tar(dict(reversed(files.items())))
    assert set(runtime.allowed(files)) == set(files)
