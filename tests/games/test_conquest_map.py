"""conquest-italy map: the shipped default map, `companion map check` errors and the SVG drawing."""

import copy
import json
import xml.etree.ElementTree as ET

import pytest

from companion.base.errors import InputError
from companion.games import conquest_map as cm


@pytest.fixture
def doc():
    return cm.default_map_doc()


def _city(doc, name):
    for ri, r in enumerate(doc["regions"]):
        for ci, c in enumerate(r["cities"]):
            if c["name"] == name:
                return ri, ci, c
    raise KeyError(name)


# -- the default map -----------------------------------------------------------------------------

def test_default_map_passes_the_check_without_warnings(doc):
    report = cm.check_map(doc)
    assert report["ok"] and report["cities"] == 42
    assert report["warnings"] == []


def test_default_map_is_labelled_as_a_default(doc):
    assert "DEFAULT MAP" in doc["note"] and "replaces" in doc["note"]


def test_default_map_shape_from_the_issue(doc):
    gm = cm.GameMap(doc)
    assert len(gm.cities) == 42 and len(gm.regions) == 7
    assert set(gm.airports) == {"Milano", "Roma", "Catanzaro"}
    sc = gm.region["Sicilia e Calabria"]
    assert len(sc["cities"]) == 5 and sc["bonus"] == 3  # the rule book's example: 3 extra units
    assert gm.majority_limit("Sicilia e Calabria") == 2  # "ogni giocatore potrà avere al massimo 2 territori"
    assert "Catanzaro" in sc["cities"]


def test_default_values_are_the_number_of_neighbours(doc):
    gm = cm.GameMap(doc)
    for c in gm.cities:
        assert gm.value(c) == len(gm.land[c] | gm.sea[c]), c


def test_default_cards_are_evenly_split(doc):
    gm = cm.GameMap(doc)
    symbols = [gm.city[c]["card"] for c in gm.cities]
    assert {s: symbols.count(s) for s in cm.SYMBOLS} == {"basil": 14, "mozzarella": 14, "tomato": 14}
    assert len(gm.cards) == 45  # 42 territory cards + 3 pizza jokers
    assert gm.card_symbol("joker:Roma") == "pizza" and gm.card_city("joker:Roma") == "Roma"


def test_default_map_has_sea_routes_to_the_islands(doc):
    gm = cm.GameMap(doc)
    assert gm.can_attack("Reggio Calabria", "Catania") == "sea"
    assert gm.can_attack("Milano", "Catanzaro") == "air"
    assert gm.can_attack("Milano", "Como") == "land"
    assert gm.can_attack("Torino", "Roma") is None  # Torino has no airport
    assert gm.can_attack("Milano", "Milano") is None
    for island in ("Sassari", "Cagliari", "Palermo", "Catania"):
        assert gm.sea[island] or any(gm.sea[n] for n in gm.land[island])


def test_default_map_positions_look_like_italy(doc):
    gm = cm.GameMap(doc)
    lat = {c: gm.city[c]["lat"] for c in gm.cities}
    lon = {c: gm.city[c]["lon"] for c in gm.cities}
    assert lat["Bolzano"] > lat["Milano"] > lat["Roma"] > lat["Napoli"] > lat["Palermo"]
    assert lon["Torino"] < lon["Venezia"] < lon["Trieste"]
    assert lon["Bari"] > lon["Napoli"]


def test_shipped_example_is_the_default_map(doc):
    from companion.base.resources import schemas_dir

    example = json.loads((schemas_dir() / "examples" / "conquest-italy.map" / "default-italy.json").read_text())
    assert example == doc


# -- map check errors ---------------------------------------------------------------------------

def _error(doc, **kw):
    with pytest.raises(InputError) as err:
        cm.check_map(doc, **kw)
    return err.value


def test_asymmetric_border_is_refused(doc):
    ri, ci, c = _city(doc, "Aosta")
    c["borders"].append("Cuneo")
    e = _error(doc)
    assert e.field == f"$.regions[{ri}].cities[{ci}].borders[2]"
    assert "not symmetric" in e.message and "Cuneo" in e.message


def test_asymmetric_sea_route_is_refused(doc):
    ri, ci, c = _city(doc, "Genova")
    c["sea"] = []
    e = _error(doc)
    assert "not symmetric" in e.message and "Genova" in e.message


def test_unknown_city_in_borders(doc):
    ri, ci, c = _city(doc, "Roma")
    c["borders"][0] = "Atlantide"
    e = _error(doc)
    assert e.field == f"$.regions[{ri}].cities[{ci}].borders[0]"
    assert "Atlantide" in e.message


def test_self_border_is_refused(doc):
    ri, ci, c = _city(doc, "Trieste")
    c["borders"].append("Trieste")
    assert "itself" in _error(doc).message


def test_duplicate_city_is_refused(doc):
    doc["regions"][0]["cities"].append(copy.deepcopy(doc["regions"][1]["cities"][0]))
    e = _error(doc)
    # the second occurrence in file order is the one refused; the message points to the first
    assert e.field == "$.regions[1].cities[0].name" and "twice" in e.message
    assert "$.regions[0].cities[7]" in e.message


def test_duplicate_region_is_refused(doc):
    doc["regions"][1]["name"] = doc["regions"][0]["name"]
    assert _error(doc).field == "$.regions[1].name"


def test_disconnected_map_is_refused(doc):
    # cut Sardinia off: drop its three sea routes on both sides
    for name in ("Sassari", "Cagliari", "Genova", "Pisa", "Roma", "Palermo"):
        _, _, c = _city(doc, name)
        c["sea"] = [x for x in c.get("sea", []) if x not in ("Sassari", "Cagliari", "Genova", "Pisa", "Roma",
                                                            "Palermo")]
    e = _error(doc)
    assert "not connected" in e.message and "Cagliari" in e.message


def test_city_count(doc):
    doc["regions"][6]["cities"].pop()  # drop Catania (and its links)
    for name in ("Palermo", "Reggio Calabria"):
        _, _, c = _city(doc, name)
        c["borders"] = [x for x in c["borders"] if x != "Catania"]
        c["sea"] = [x for x in c.get("sea", []) if x != "Catania"]
    e = _error(doc)
    assert e.field == "$.regions" and "41 cities, 42 expected" in e.message
    assert cm.check_map(doc, cities=41)["cities"] == 41


def test_cities_option_must_be_positive(doc):
    assert _error(doc, cities=0).field == "--cities"


def test_unknown_airport(doc):
    doc["airports"].append("Atlantide")
    assert _error(doc).field == "$.airports[3]"


def test_schema_errors_name_the_path(doc):
    doc["regions"][2]["cities"][1]["card"] = "pizza"
    assert _error(doc).field == "$.regions[2].cities[1].card"


def test_several_problems_say_how_many_more(doc):
    doc["regions"][0]["cities"][0]["borders"].append("Nowhere")
    doc["regions"][0]["cities"][1]["borders"].append("Elsewhere")
    assert "and 1 more problem" in _error(doc).message


def test_not_an_object():
    assert _error([1, 2]).field == "$"


def test_club_map_with_wrong_values_warns(doc):
    _, _, c = _city(doc, "Roma")
    c["value"] = 9
    report = cm.check_map(doc)
    assert any("Roma is worth 9 but has 6 neighbours" in w for w in report["warnings"])


def test_small_club_map_example():
    from companion.base.resources import schemas_dir

    small = json.loads((schemas_dir() / "examples" / "conquest-italy.map" / "small-club-map.json").read_text())
    report = cm.check_map(small, cities=3)
    assert report["cities"] == 3 and report["sea_routes"] == 1 and report["land_borders"] == 2
    assert any("no lon/lat" in w for w in report["warnings"])
    svg = cm.map_svg(small)  # drawn on a circle
    assert ET.fromstring(svg).tag.endswith("svg")


# -- drawing -------------------------------------------------------------------------------------

def test_svg_is_self_contained_xml_with_every_city(doc):
    svg = cm.map_svg(doc)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = "".join(t.text or "" for t in root.iter(ns + "text"))
    for r in doc["regions"]:
        assert r["name"] in texts
        for c in r["cities"]:
            assert c["name"] in texts
    assert len(root.findall(f"{ns}rect[@class='airport']")) == 3
    assert len(root.findall(f"{ns}circle[@class='city']")) == 39
    assert len(root.findall(f"{ns}line[@class='land']")) == cm.check_map(doc)["land_borders"]
    assert len(root.findall(f"{ns}line[@class='sea']")) == 7
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", "")  # nothing fetched


def test_svg_north_is_up(doc):
    svg = ET.fromstring(cm.map_svg(doc))
    ns = "{http://www.w3.org/2000/svg}"
    y = {}
    for t in svg.iter(ns + "text"):
        if t.text and t.text.strip() in ("Bolzano", "Palermo"):
            y[t.text.strip()] = float(t.get("y"))
    assert y["Bolzano"] < y["Palermo"]


def test_svg_escapes_names(doc):
    doc["name"] = "Club <A&B>"
    svg = cm.map_svg(doc)
    ET.fromstring(svg)
    assert "Club &lt;A&amp;B&gt;" in svg
