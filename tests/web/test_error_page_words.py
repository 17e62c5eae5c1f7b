"""An error page says what went wrong in words: never the JSON path (or header name) of its field."""


def test_an_error_page_shows_no_field_path(client):
    r = client.get("/", headers={"Accept": "text/html", "Host": "evil.example"})  # an error with a field (Host)
    assert r.status_code == 403
    html = r.get_data(as_text=True)
    assert "DNS rebinding" in html  # the server's sentence is there ...
    assert "<code>" not in html and "(Host)" not in html  # ... its field is not
