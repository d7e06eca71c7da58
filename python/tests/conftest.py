# SPDX-License-Identifier: BSD-2-Clause
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("MMAEMU_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source_dir():
    return SOURCE_DIR
