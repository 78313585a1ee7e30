"""What one pytest session that stands for many (the filter's rounds, the mutation session)
clears between them, so each starts as a session of its own would (stdlib only; shipped
beside assets/grading/suite_rounds.py and assets/program/mutant_session.py).

Two things outlive a test: its tmp_path directory, and what the program wrote outside its
working directory (/tmp, /var/tmp, /dev/shm). In one session per program run both went
with the container; here they would reach the next round or mutant: a program that keeps a
cache in /tmp would answer differently the second time, so gold's second round would fail
and a mutant would be killed by what the reference left.
"""

import os
import shutil
import stat

SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")


def empty_basetemp(session):
    """Each test's tmp_path is a numbered directory that pytest finds by listing the base
    directory: emptied, so that list stays as short as in a session of its own."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        for path in factory.getbasetemp().iterdir():
            shutil.rmtree(path, ignore_errors=True)


def sweep_programs_files(dirs=SCRATCH):
    """What the program's uids (`TF_PROGRAM_UID` and up: tfrun's, one per pytest worker) left
    in the scratch directories, links never followed. Without isolation the program runs as
    pytest's own user and its files cannot be told from pytest's: nothing goes."""
    base = os.environ.get("TF_PROGRAM_UID")
    if not base or os.geteuid() != 0:
        return
    for top in dirs:
        for parent, subdirs, names in os.walk(top):
            for name in [*subdirs, *names]:
                path = os.path.join(parent, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if info.st_uid >= int(base):
                    _remove(path, info)
            subdirs[:] = [d for d in subdirs if os.path.isdir(os.path.join(parent, d))]


def _remove(path, info):
    try:
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        pass
