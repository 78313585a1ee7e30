from taskfoundry.kinds.program.testgen.usage import parse_usage

HELP = """Usage: tool [OPTIONS] COMMAND [FILE...]

Options:
  -d, --delimiter CHAR   field delimiter (default ',')
  -o, --output FORMAT    output format: csv|tsv|json
      --no-header        first row is data
  --out=FILE             write results to FILE
  -n N                   how many
  -h, --help             show this help

Commands:
  head     first rows
  count    count rows
"""


def test_parses_options_with_metavars_and_choices() -> None:
    usage = parse_usage(HELP)
    by_name = {o.name: o for o in usage.options}
    assert by_name["--delimiter"].flags == ("-d", "--delimiter")
    assert by_name["--delimiter"].metavar == "CHAR"
    assert by_name["--output"].choices == ("csv", "tsv", "json")
    assert by_name["--no-header"].metavar is None
    assert by_name["--out"].metavar == "FILE"
    assert by_name["-n"].metavar == "N"


def test_parses_commands_section() -> None:
    assert parse_usage(HELP).commands == ["head", "count"]


def test_a_multi_call_binary_s_functions_are_its_commands() -> None:
    """uutils' diffutils has no --help: the usage it prints without arguments lists its
    functions on one line, as busybox does (whose "[" is no word to call)."""
    diffutils = (
        "Usage: diffutils [function [arguments...]]\n\nCurrently defined functions:\n\n    cmp, diff\n"
    )
    assert parse_usage(diffutils).commands == ["cmp", "diff"]
    busybox = "Currently defined functions:\n\t[, [[, acpid, addgroup,\n\tarp, ash\n"
    assert parse_usage(busybox).commands == ["acpid", "addgroup", "arp", "ash"]
    # a command and its alias, described, stay one command
    assert parse_usage("Commands:\n  extract, x   Extract files\n").commands == ["extract"]


def test_commands_with_their_arguments_placeholders() -> None:
    """GLib's help (appstream-generator): each command with its arguments, its description
    after a dash, once on the next line; the seven were read as none."""
    glib = (
        "Application Options:\n  -w, --workspace=DIR     Define the workspace location\n\n"
        "Subcommands:\n"
        "  run [SUITE] [SECTION]   - Process new metadata for the given distribution suite.\n"
        "  process-file SUITE SECTION FILE1 [FILE2 ...]\n"
        "                          - Process new metadata for the given package file.\n"
        "  cleanup                 - Cleanup old metadata and media files.\n"
        "  publish SUITE [SECTION] - Export all metadata.\n"
        "  forget <PKID>           - Drop all information we have about this package-id.\n"
        "  see the manual for more\n"
    )
    usage = parse_usage(glib)
    assert usage.commands == ["run", "process-file", "cleanup", "publish", "forget"]
    assert [o.name for o in usage.options] == ["--workspace"]
    # options under a commands heading still end it
    assert parse_usage("Commands:\n  run [X]   go\n  -v, --verbose  more\n").commands == ["run"]


def test_prose_is_not_an_option() -> None:
    usage = parse_usage("This tool reads -- carefully -- from stdin.\n")
    assert usage.options == [] and usage.commands == []


def test_clap_long_help_reads_descriptions_and_possible_values_below_the_flags() -> None:
    text = """Usage: hexyl [OPTIONS] [FILE]

Options:
  -n, --length <N>
          Only read N bytes from the input.

      --color <WHEN>
          When to use colors.

          [default: always]
          [possible values: always, auto, never]

  -p, --plain
          Display output with --no-characters
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--length"].metavar == "N"
    assert by_name["--color"].choices == ("always", "auto", "never")
    assert by_name["--plain"].metavar is None
    assert "no-characters" in by_name["--plain"].description


def test_argparse_braced_choices() -> None:
    text = """usage: cowsay [-h] [-c {cow,tux}] [-t TEXT]

options:
  -h, --help            show this help message and exit
  -c {cow,tux}, --character {cow,tux}
  -t TEXT, --text TEXT
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--character"].choices == ("cow", "tux")
    assert by_name["--character"].flags == ("-c", "--character")
    assert by_name["--text"].metavar == "TEXT"


def test_synopsis_groups_of_a_non_gnu_program() -> None:
    text = """Usage: figlet [ -cklnoprstvxDELNRSWX ] [ -d fontdirectory ]
              [ -f fontfile ] [ -m smushmode ] [ -w outputwidth ]
              [ -C controlfile ] [ -I infocode ] [ message ]
"""
    usage = parse_usage(text)
    by_name = {o.name: o for o in usage.options}
    assert {"-c", "-k", "-X", "-D"} <= set(by_name)
    assert by_name["-d"].metavar == "FONTDIRECTORY"
    assert by_name["-w"].metavar == "OUTPUTWIDTH"
    assert by_name["-c"].metavar is None


def test_the_bare_flags_of_synopsis_forms() -> None:
    """acl's chacl prints one form a line and no option table: its flags are the forms'."""
    text = """Usage:
\texecutable acl pathname...
\texecutable -b acl dacl pathname...
\texecutable -d dacl pathname...
\texecutable -R pathname...
\texecutable -l pathname...\t[not IRIX compatible]
usage: other [-x] -y|--zed FILE -- rest
"""
    names = [o.name for o in parse_usage(text).options]
    assert names == ["-b", "-d", "-R", "-l", "-x", "-y", "--zed"]
    assert all(o.metavar is None for o in parse_usage(text).options)


def test_argparse_subcommands_in_the_synopsis() -> None:
    """conda-package-handling's help has no "commands:" heading, only argparse's brace group."""
    text = """usage: cph [-h] [-V] [-l {debug,info}] {extract,x,create,c} ...

positional arguments:
  {extract,x,create,c}
    extract (x)         Extract package contents
usage: other -f {a,b} FILE
"""
    usage = parse_usage(text)
    assert usage.commands == ["extract", "x", "create", "c"]  # `-l`'s and `-f`'s values are not
    assert {o.name for o in usage.options} >= {"-h", "-V", "-f"}
    assert next(o for o in usage.options if o.name == "-l").choices == ("debug", "info")


def test_argparse_subcommands_on_a_wrapped_synopsis_line() -> None:
    """kas 5.5's help: argparse wrapped the synopsis, and the brace group stood on its third
    line. Read from the first line alone, kas had no subcommands and its probes ran none."""
    text = """usage: kas [-h] [--version] [-l {debug,info,warning,error,critical}]
           [--no-color]
           {build,checkout,clean,dump,for-all-repos,lock,menu,shell}
           ...

kas - setup tool for bitbake based project

positional arguments:
  {build,checkout,clean,dump,for-all-repos,lock,menu,shell}
    build               Checks out all necessary repositories and builds using
                        bitbake as specified in the configuration file.
    checkout            Checks out all necessary repositories and sets up the

options:
  -h, --help            show this help message and exit
  -l {debug,info,warning,error,critical}, --log-level {debug,info,warning,error,critical}
                        Set log level (default: info)
  --no-color            Disable colors for all outputs
"""
    usage = parse_usage(text)
    assert usage.commands == ["build", "checkout", "clean", "dump", "for-all-repos", "lock", "menu", "shell"]
    assert next(o for o in usage.options if o.name == "--log-level").choices[:2] == ("debug", "info")


def test_synopsis_does_not_duplicate_table_options() -> None:
    text = "usage: tool [-n N] [-v]\n\n  -n N   count\n  -v     verbose\n"
    assert [o.name for o in parse_usage(text).options] == ["-n", "-v"]


def test_getopts_style_lowercase_metavars() -> None:
    text = """Options:
    -s, --string str    use the given string as input, instead of a file
    -i, --input file    read input from the given file (default: stdin)
    -t, --tab tabstr    use the given string to indent pretty-printed output
                        (default: two spaces)
    -m, --minimize      minimize JSON instead of pretty-printing it
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--string"].metavar == "str"
    assert by_name["--input"].metavar == "file"
    assert by_name["--minimize"].metavar is None
    assert by_name["--minimize"].description.startswith("minimize JSON")
    assert "two spaces" in by_name["--tab"].description


def test_clap_listed_possible_values() -> None:
    text = """Options:
      --color <WHEN>
          When to use colors

          [default: always]

          Possible values:
          - always: Always use colorized output
          - auto:   Only displays colors if the output goes to an interactive terminal
          - never:  Do not use colorized output

  -p, --plain
          Plain output
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--color"].choices == ("always", "auto", "never")
    assert by_name["--plain"].choices == ()


def test_choices_listed_in_prose_for_a_metavar() -> None:
    text = """usage: Cowsay [-h] [-c CHARACTER] -t TEXT

CLI tool. Available Characters: ['beavis',
'cow', 'tux']

options:
  -c, --character CHARACTER
  -t, --text TEXT
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--character"].choices == ("beavis", "cow", "tux")
    assert by_name["--text"].choices == ()


def test_choices_listed_in_an_option_description() -> None:
    text = """Usage:   cmark [FILE*]
Options:
  --to, -t FORMAT  Specify output format (html, xml, man, commonmark, latex)
  --width WIDTH    Specify wrap width (default 0 = nowrap)
  --style STYLE    one of: 'plain', 'fancy' or 'none'
  --mode MODE      run mode {fast, slow}
  --size SIZE      size (in bytes, default 512)
"""
    by_name = {o.name: o for o in parse_usage(text).options}
    assert by_name["--to"].choices == ("html", "xml", "man", "commonmark", "latex")
    assert by_name["--style"].choices == ("plain", "fancy", "none")
    assert by_name["--mode"].choices == ("fast", "slow")
    assert by_name["--width"].choices == ()  # a parenthesised remark, not a list
    assert by_name["--size"].choices == ()


def test_explorer_tries_the_listed_choices_first() -> None:
    import random

    from taskfoundry.kinds.program.testgen.inputs import Corpus, values_for

    to = next(o for o in parse_usage("  --to, -t FORMAT  Specify output format (html, xml, man)\n").options)
    values = values_for(to, Corpus(), random.Random(0))
    assert values[:3] == ["html", "xml", "man"]
