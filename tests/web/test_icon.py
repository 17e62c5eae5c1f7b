"""Every page has the box's icon, print pages too, and ``/favicon.ico`` (where a browser looks by itself for
a download, a print page or an SVG opened in a tab) answers with it instead of a 404."""

from companion.base.resources import web_dir


def test_favicon_ico_is_the_icon(api):
    r = api.get("/favicon.ico")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml" and b"<svg" in r.data
    assert r.data == (web_dir() / "static" / "icon.svg").read_bytes()


def test_every_page_with_its_own_head_names_the_icon():
    for path in sorted((web_dir() / "templates").glob("*.html")):
        text = path.read_text(encoding="utf-8")
        if "<head>" in text:
            assert 'rel="icon"' in text, path.name
