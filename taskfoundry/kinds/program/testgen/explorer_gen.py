"""The explorer behind the Generator protocol."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD
from taskfoundry.builders.detect_python import console_scripts
from taskfoundry.kinds.program.testgen.base import GeneratedBranch, GenerationContext
from taskfoundry.kinds.program.testgen.explorer import Explorer
from taskfoundry.kinds.program.testgen.probes import RunnerJob, family
from taskfoundry.kinds.program.testgen.spare import SPARE_FILE, write_spare
from taskfoundry.kinds.program.testgen.writer import call_timeout, render_tests
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.pipeline.secret import seed_tag


def program_names(ctx: GenerationContext) -> set[str]:
    """What the docs may call the program: a Python gold is packed as `executable`, its docs
    use the console script's name."""
    names = {ctx.program, Path(WORKSPACE_EXECUTABLE).name}
    if ctx.recipe.kind == "python":
        names |= set(console_scripts(ctx.repo))
    return names


class ExplorerGenerator:
    def generate(self, ctx: GenerationContext) -> GeneratedBranch:
        cfg = ctx.config.explorer.seeded()
        assert cfg.seed is not None
        job = RunnerJob(
            executable=COVERAGE,
            coverage=ctx.recipe.coverage,
            cov_root=COV_ROOT,
            go_module=ctx.go_module,
            timeout=cfg.probe_timeout,
            exclude=ctx.exclude,
            parallel=cfg.parallel,
            argv0=ctx.argv0,
        )
        state = Explorer(cfg, job, GOLD).run(
            ctx.sandbox,
            ctx.repo,
            program_names(ctx),
            ctx.usage,
            ctx.log_dir / "probes.jsonl",
            ctx.harvested,
            ctx.public_view,
            ctx.replay,
        )
        # the guided step's candidates: the probes not kept, then the kept ones (whose
        # neighbours may tell a survivor apart where the probe itself does not)
        write_spare(ctx.log_dir / SPARE_FILE, [*state.spare, *state.kept])
        timeout = call_timeout(state.slow_timeout)
        files, written = render_tests(state.kept, ctx.program, cfg.seed, timeout)
        # `written` is grouped by command: pair each test with its own probe's lines
        per_test = {
            w.junit_name: {f: sorted(ls) for f, ls in state.kept[w.kept].covered.items()} for w in written
        }
        return GeneratedBranch(
            name=f"explorer-{seed_tag(cfg.seed)}",
            files=files,
            tests=[w.junit_name for w in written],
            covered=state.covered,
            total=state.total,
            per_test_lines=per_test,
            probes_run=state.probes_run,
            exhausted=state.exhausted,
            seconds=state.seconds,
            slow_timeout=state.slow_timeout,
            origins=state.origins,
            seed=cfg.seed,
            not_kept={
                "public_like": state.public_like,
                "replayed": state.replayed,
                "dummy_like": state.dummy_like,
                "printer_skipped": state.printer_skipped,
                "traces": state.traces,
                "input_independent": state.input_independent,
                "input_independent_public": state.input_independent_public,
            },
            test_origins={w.junit_name: family(state.kept[w.kept].probe.origin) for w in written},
        )
