"""Reading a user's reference graph (colide_core.graph.reference.read_reference): formats, name matching,
and hostile files (clear ValueErrors, bounded size).

Convention: B[i, j] != 0 means i -> j.
"""
import numpy as np
import pytest

from colide_core.graph.export import export_graph
from colide_core.graph.reference import read_reference

NAMES = ["Raf", "Mek", "Erk", "Akt"]
W = np.zeros((4, 4))
W[0, 1] = W[1, 2] = 1.0  # Raf -> Mek -> Erk; Akt isolated
EXPECTED = W.astype(int)


@pytest.mark.parametrize("fmt, filename", [
    ("edges_csv", "ref.csv"), ("adjacency_csv", "ref.csv"), ("graphml", "ref.graphml"),
    ("dot", "ref.dot"), ("json", "ref.json"), ("dagitty", "ref.txt"),
])
def test_every_export_format_reads_back_as_a_reference(fmt, filename):
    data = export_graph(W, NAMES, fmt)
    ref = read_reference(data, filename, NAMES)
    assert ref.B.to_numpy().tolist() == EXPECTED.tolist()
    assert list(ref.B.columns) == NAMES and ref.n_edges == 2


def test_subset_of_nodes_in_another_order():
    ref = read_reference(b"source,target\nErk,Akt\nRaf,Erk\n", "mine.csv", NAMES)
    assert ref.B.loc["Erk", "Akt"] == 1 and ref.B.loc["Raf", "Erk"] == 1 and ref.n_edges == 2
    assert ref.unmentioned == ["Mek"]


def test_dagitty_written_by_hand():
    text = b'dag {\n Raf -> {Mek Erk}\n Akt <- Erk [beta=0.5]; "Mek"\n}'
    ref = read_reference(text, "model.dagitty", NAMES)
    assert ref.B.loc["Raf", "Mek"] == ref.B.loc["Raf", "Erk"] == ref.B.loc["Erk", "Akt"] == 1
    assert ref.n_edges == 3


@pytest.mark.parametrize("data, filename, message", [
    (b"source,target\nRaf,PIP3\nRaf,Mek\n", "r.csv", "not columns of the data: 'PIP3'"),
    (b"source,target\nRaf,Mek\nMek,Raf\n", "r.csv", "directed cycle"),
    (b"source,target\nRaf,Raf\n", "r.csv", "self-loop"),
    (b"dag { Raf <-> Mek }", "r.txt", "not supported"),
    (b"<graphml><oops", "r.graphml", "could not be read as graphml"),
    (b"\xff\xfe\x00junk", "r.csv", "not UTF-8"),
    (b"source,target\nRaf,Mek\n", "r.xlsx", "Unknown reference file type"),
    (b"", "r.csv", "empty"),
    (b"source,target\n\"Raf\x00\",Mek\n", "r.csv", "U+0000"),
    (b"source,target\n" + b"a,b\n" * 10, "r.csv", "'a', 'b'"),
])
def test_bad_reference_files_give_clear_errors(data, filename, message):
    with pytest.raises(ValueError) as info:
        read_reference(data, filename, NAMES)
    assert message in str(info.value)


def test_size_is_bounded_before_parsing():
    with pytest.raises(ValueError, match="above the limit"):
        read_reference(b"source,target\n" + b"Raf,Mek\n" * 100, "r.csv", NAMES, max_bytes=200)


def test_xml_entity_bomb_is_refused():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE g [<!ENTITY a "aaaaaaaaaa">'
            + b"".join(b'<!ENTITY %s "%s">' % (bytes([98 + k]), (b"&%s;" % bytes([97 + k])) * 10) for k in range(9))
            + b']><graphml><graph edgedefault="directed"><node id="&j;"/></graph></graphml>')
    with pytest.raises(ValueError, match="could not be read as graphml"):
        read_reference(bomb, "bomb.graphml", NAMES)
