import pytest


@pytest.fixture
def sample_text() -> str:
    return "The cat and the hat. The cat sat; a cat ran to the hat!"
