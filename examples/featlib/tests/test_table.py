from featlib.table import column_totals, render


def test_render_aligns_columns():
    text = render(["name", "qty"], [["apple", 3], ["kiwi", 12]])
    assert text.splitlines() == ["name  | qty", "----- | ---", "apple |   3", "kiwi  |  12"]


def test_render_floats_and_none():
    text = render(["a", "b"], [[1.5, None]])
    assert text.splitlines()[-1] == "1.50 |"


def test_render_separator():
    assert render(["x"], [["y"]], sep=";").splitlines() == ["x", "-", "y"]


def test_render_short_rows():
    assert render(["a", "b"], [["only"]]).splitlines()[-1] == "only |"


def test_column_totals():
    assert column_totals([[1, "x", 2.5], [2, "y"]]) == [3.0, None, 2.5]


def test_column_totals_empty():
    assert column_totals([]) == []


def test_column_totals_ignores_bools():
    assert column_totals([[True, 1]]) == [None, 1.0]
