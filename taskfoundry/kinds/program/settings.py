"""The program kind's settings: the component sections a `Config` composes (`explorer`,
`agent`, `filter`, `mutation`) and each stage's own section, cut from a `Config` by
`taskfoundry.sections`.

Kept light (pydantic and constants): every program stage's cache key covers this module, so
it imports no stage code; an edit of the explorer does not re-run the cleanroom.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from taskfoundry.agent.config import ModelConfig, Price
from taskfoundry.agent.schema import AgentConfig
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.filter.dummies import DUMMY_NAMES, NO_LOGIC_NAMES
from taskfoundry.mutation import OPERATORS
from taskfoundry.pipeline.secret import fresh_seed
from taskfoundry.pipeline.settings import StageSettings

Strategy = Literal["monolithic", "decomposed", "iterative"]

AREAS = ("args", "config", "help", "io", "subcommands", "tui")


def _default_model() -> ModelConfig:
    price = Price(input_per_mtok=3.0, output_per_mtok=15.0)
    return ModelConfig(provider="anthropic", model="claude-sonnet-4-5", prices={"claude-sonnet-4-5": price})


class GenerationBudget(AgentConfig):
    """The agent loop's config, with its step/cost/time limits as totals for a whole generation
    (shared out over its runs) and defaults to match."""

    model_config = {"extra": "forbid"}

    step_limit: int | None = Field(default=200, ge=1, description="model calls, all runs together")
    cost_limit: float | None = Field(default=10.0, gt=0, description="USD, all runs together")
    time_limit: float | None = Field(default=5400.0, gt=0, description="wall-clock seconds in all")


class AgentGenConfig(BaseModel):
    """The `agent` section of the config: which model, which strategy, and the budgets."""

    model_config = {"extra": "forbid"}

    model: ModelConfig = Field(
        default_factory=_default_model, description="provider, model, base_url, api_key_env, prices"
    )
    strategy: Strategy = Field("iterative", description="monolithic, decomposed or iterative")
    budget: GenerationBudget = Field(
        default_factory=GenerationBudget, description="the loop's config; its limits are totals"
    )
    areas: list[str] = Field(
        default_factory=lambda: list(AREAS), description="decomposed: one run per area, in this order"
    )
    max_rounds: int = Field(3, ge=1, description="iterative: agent runs at most")
    coverage_target: float = Field(0.9, ge=0, le=1, description="iterative: stop at this line rate")
    min_gain: float = Field(0.5, ge=0, description="iterative: stop when a round adds fewer points")
    harvest: bool = Field(True, description="port the repository's own behavioral tests")
    review: bool = Field(True, description="lint + gold/dummy review after each submit")
    suite_timeout: float = Field(600.0, gt=0, description="seconds one pytest run of the suite may take")


class HarvestConfig(BaseModel):
    """The program's own test suite, run once with a recording shim: its calls become probes."""

    model_config = {"extra": "forbid"}

    enabled: bool = Field(True, description="run the project's tests and replay their calls as probes")
    seconds: float = Field(300, gt=0, description="wall-time the project's test suite may take")
    compile_seconds: float = Field(
        600,
        ge=0,
        description="more wall-time where the suite is compiled first (cargo's and go's tests): "
        "uutils' diffutils spent the 300 s compiling its tests on a busy machine and ran none",
    )
    max_probes: int = Field(2000, ge=0, description="distinct recorded calls replayed at most")
    only: bool = Field(
        False,
        description="a test of every replayable call and no other probe: the project's own tests "
        "as a suite (benchmarks/strength.py's own-tests row)",
    )


class ExplorerConfig(BaseModel):
    """Budgets and knobs of the explorer."""

    model_config = {"extra": "forbid"}

    seed: int | None = Field(
        None,
        description="seed for every random choice: same seed, same branch. None (the default): a "
        "secret seed drawn for each build, kept with the task's hidden reports (reports/secret.json) "
        "and reused when the build resumes, so a worker running this public code cannot draw the "
        "suite's inputs; a number reproduces a build on purpose",
    )
    no_logic: bool = Field(
        True,
        description="keep no probe a worker could replay without building anything: none a public "
        "seed draws (public_probes), none whose outcome is the gold's --version or --help output",
    )
    public_seeds: list[int] = Field(
        default_factory=lambda: [0, 1],
        description="the seeds an attacker would use (the public defaults): the replay dummy's "
        "table and the public probes the explorer does not keep are drawn with them",
    )
    public_probes: int = Field(
        5000,
        ge=0,
        description="public probes drawn per public seed (drawn, not run: cheap) that the explorer "
        "does not keep: a lookup table of the gold on them passes none of the suite's tests",
    )
    replay_probes: int = Field(
        1000,
        ge=0,
        description="of those, per public seed, how many run on the gold for the replay dummy the "
        "filter runs (an attacker's table, with its argv-only fallback); 0: no replay dummy",
    )
    max_input_independent: float = Field(
        0.1,
        ge=0,
        le=1,
        description="share of the suite that tests whose outcome does not depend on their data (the "
        "gold answers the same argv with other stdin and files alike) may take at most; 1: no cap",
    )
    max_probes: int = Field(
        600, description="probes run against the coverage build; more while coverage still grows"
    )
    patience: float = Field(
        0.25,
        description="past max_probes, go on until max_probes × this probes in a row reach no new line",
    )
    growth: float = Field(5.0, description="probes run at most: max_probes × this, however coverage grows")
    max_seconds: float = Field(
        900, description="wall-time budget of exploration and of checking the kept tests on the gold"
    )
    coverage_target: float = Field(0.95, description="stop once this line rate is reached")
    batch: int = Field(40, description="probes per sandbox exec")
    parallel: int = Field(
        1, ge=1, description="probes of a batch run at once (each with its own directories); 1: one by one"
    )
    max_tests: int = Field(1000, description="tests kept at most")
    min_tests: int = Field(
        80,
        description="a program whose lines few probes reach (GNU hello: 46 tests) gets tests up to "
        "this many from the probes that reached no new line, each with an output no kept test has",
    )
    max_feature_tests: int = Field(
        300, description="tests kept for a new combination of options alone (no new line) at most"
    )
    probe_timeout: float = Field(5.0, description="seconds a probe may run")
    slow_probe_timeout: float = Field(
        20.0,
        description="seconds a probe of a slow program may run: when a share of the first batch "
        "(slow_share) timed out and most of a sample of them finish in this, the explorer runs "
        "with it, and its tests give each call twice this",
    )
    slow_share: float = Field(0.25, description="share of the first batch timed out that calls a retry")
    max_data_values: int = Field(120, description="installed data files tried as each data option's value")
    harvest: HarvestConfig = Field(
        default_factory=HarvestConfig,
        description="the project's own tests' calls, replayed first (outside max_probes)",
    )

    def seeded(self) -> ExplorerConfig:
        """This config with a seed: a fresh secret one where none is set (the build flow sets
        the build's own, kept for its resume)."""
        return self if self.seed is not None else self.model_copy(update={"seed": fresh_seed()})


class FilterConfig(BaseModel):
    model_config = {"extra": "forbid"}

    gold_runs: int = Field(3, description="runs of the suite against the gold executable")
    dummies: list[str] = Field(default_factory=lambda: list(DUMMY_NAMES))
    no_logic: list[str] = Field(
        default_factory=lambda: list(NO_LOGIC_NAMES),
        description="dummies built from the gold (testgen.replay): `replay` (a lookup table of "
        "the gold on public probes, with an argv-only fallback), `version` and `help` (the "
        "gold's --version and --help output for every call); a test one passes is dropped",
    )
    parallel: int = Field(
        2, ge=1, description="suite runs (gold and dummies) at once, each in its own container"
    )
    one_session: bool = Field(
        True,
        description="every run in one pytest session a container (`parallel` containers, each "
        "with a share of the tests); false: one container and one session per run",
    )
    grade_reference: bool = Field(
        True,
        description="grade the reference submission (solution.tar.gz, built by its compile.sh) "
        "through the real grader before packaging: tests it fails are dropped (reference_fails), "
        "and a reference that does not build is no task",
    )
    recall_in_resolve: bool = Field(
        False,
        description="keep tests that recall a published algorithm's bytes (a digest, codec output) "
        "among those that decide resolved; false: they go to ignored_tests with reason recall",
    )


class MutationConfig(BaseModel):
    """Mutation analysis of the kept suite: a step of every program build."""

    model_config = {"extra": "forbid"}

    enabled: bool = Field(True, description="run mutation analysis after the filter")
    budget: int = Field(
        200, ge=0, description="mutants analysed at most (sampled from those on covered lines)"
    )
    seed: int = Field(0, description="seed of the sample: same seed, same mutants")
    operators: list[str] = Field(default_factory=lambda: list(OPERATORS), description="operators to use")
    workers: int = Field(2, ge=1, description="containers analysing mutants at the same time")
    program_timeout: float = Field(
        5.0, gt=0, description="seconds one run of a mutant may take before it counts as a hang"
    )
    output_cap: int = Field(
        8 * 1024 * 1024, description="bytes of output one run may write before it counts as a flood"
    )
    build_timeout: float = Field(300, gt=0, description="seconds one mutant's rebuild may take")
    schemata: bool = Field(
        True,
        description="build a worker's mutants once as mutant schemata and switch each on at run "
        "time; false: rebuild every mutant alone",
    )
    compiled_guard: bool = Field(
        True,
        description="the guard that stands in for the program, compiled from C in the build image "
        "when it has a compiler (false: the Python guard, ten or more ms a program call)",
    )
    direct_calls: bool = Field(
        True,
        description="call a test that is a plain function of tmp_path directly in the test "
        "session (false: every test through pytest's run protocol, twice the cost a test)",
    )
    infection: bool = Field(
        True,
        description="C: a watch build records which mutants each test's runs infect (a pure "
        "expression that takes another value); a test that infects none of a mutant is not run "
        "on it, as it cannot tell it apart (false: every test that reaches its line)",
    )
    equivalence_seconds: float = Field(
        10,
        ge=0,
        description="per worker, seconds of rebuilds the equivalence check may spend: survivors of "
        "the schema build rebuilt alone, in plan order, and compared with the reference's program "
        "(0: no check; rcalc's found 1 equivalent in 30 rebuilds of 2.9 s)",
    )
    max_seconds: float = Field(
        1800,
        gt=0,
        description="wall-time budget of the whole stage (first analysis, guided step, second "
        "analysis); what is left is not started, and the report says exhausted: time",
    )
    guided: bool = Field(True, description="add tests that kill survivors, then analyse the survivors again")
    guided_probes: int = Field(300, ge=0, description="probes the guided exploration runs at most")
    guided_per_line: int = Field(6, ge=1, description="probes kept for each survivor's line")
    guided_pool: int = Field(
        40, ge=1, description="probes tried on each survivor at most: its line's, then their neighbours"
    )

    @field_validator("operators")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(OPERATORS))
        if unknown:
            raise ValueError(f"unknown mutation operator(s) {unknown}; valid: {', '.join(OPERATORS)}")
        return value


class GeneratorSettings(BaseModel):
    """What a generator reads of the config: which one runs, and its section."""

    model_config = {"extra": "forbid", "frozen": True}

    name: str = Field("explorer", description="a name of GENERATORS")
    explorer: ExplorerConfig = Field(default_factory=ExplorerConfig)
    agent: AgentGenConfig = Field(default_factory=AgentGenConfig)
    dummies: tuple[str, ...] = Field(DUMMY_NAMES, description="the dummies the agent's reviewer runs")


class CleanroomSettings(StageSettings):
    """What the cleanroom stage reads."""

    usage_timeout: float = 5.0  # seconds `--help` may run (the explorer's probe timeout)
    # an instrumentable gold (a worker can load code into it: reports/integrity.json) is
    # shipped labelled (`record`), or is an error and no task (`require`: sealed golds only)
    integrity: Literal["record", "require"] = "record"
    # the leak scan's listings of base images, by image id: shared by every run on this
    # machine, so each base is walked once (see docs/leak-scan.md)
    listing_dir: Path = Field(default_factory=lambda: Path.home() / ".cache" / "taskfoundry" / "leakscan")


class GenerateSettings(StageSettings):
    """What the generate stage reads: the generator and its section."""

    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)

    @property
    def uses_model(self) -> bool:
        """Whether it holds a model-call slot: every generator but the explorer calls one."""
        return self.generator.name != "explorer"


class FilterSettings(BaseModel):
    """The filter's section: its runs and dummies, and the grading harness it shares with `eval`."""

    model_config = ConfigDict(frozen=True)

    filter: FilterConfig = FilterConfig()
    harness: EvalConfig = EvalConfig()


class MutationSettings(StageSettings):
    """The mutation stage's section: the analysis, the explorer it runs again for guided
    generation, and the filter (with the grading harness) the new tests and the mutants go through."""

    mutation: MutationConfig = Field(default_factory=MutationConfig)
    explorer: ExplorerConfig = Field(default_factory=ExplorerConfig)
    # the generator that wrote the suite (only its section): the agent gets the survivors back
    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)
    filter: FilterSettings = Field(default_factory=FilterSettings)


class AcceptConfig(BaseModel):
    """What makes a program task benchmark-grade (issue 58). A task below it is still written,
    marked with its grade and the bars it missed, and left out of `tasks` and releases unless
    asked for (`--below-gate`). A bar set to null is not required."""

    model_config = ConfigDict(extra="forbid")

    min_line_rate: float | None = Field(0.60, ge=0, le=1, description="first-party line coverage")
    min_mutation_score: float | None = Field(
        0.60, ge=0, le=1, description="killed / (killed + survived); a task not analysed misses it"
    )
    min_tests: int | None = Field(50, ge=0, description="kept tests")
    reference: bool = Field(True, description="the reference submission graded 1.0 on the kept suite")
    dummies: bool = Field(
        True,
        description="the filter ran every standard dummy (filter.dummies), so no dummy passes a kept "
        "test: the filter drops each test one passes",
    )
    max_replay_pass_rate: float | None = Field(
        0.10, ge=0, le=1, description="a lookup table of the gold on public probes; not tried: missed"
    )


class PackageSettings(StageSettings):
    """What the package stage reads: where the task goes and how its images are named, and
    whether the reference submission is graded first (through `harness`, as `eval` grades)."""

    grade_reference: bool = Field(
        True, description="grade solution.tar.gz before packaging; drop tests it fails (reference_fails)"
    )
    harness: EvalConfig = Field(default_factory=EvalConfig)
    accept: AcceptConfig = Field(default_factory=AcceptConfig)
    dummies: list[str] = Field(default_factory=lambda: list(DUMMY_NAMES), description="the filter's dummies")
