"""What the server's start is spared (its time is measured by `make bench`; these tests pin the causes):
the URL builders of the ~125 routes are compiled at their first ``url_for``, not at registration."""

from werkzeug.routing import Map, Rule

from companion.web.app import create_app


def test_registering_the_routes_compiles_no_url_builder_and_url_for_still_builds(tmp_path, monkeypatch):
    calls = []
    original = Rule._compile_builder

    def counting(self, append_unknown=True):
        calls.append(self.rule)
        return original(self, append_unknown)

    monkeypatch.setattr(Rule, "_compile_builder", counting)
    app = create_app({"DATA_DIR": str(tmp_path), "GPIO": "off"})
    rules = [r for r in app.url_map.iter_rules() if r.endpoint != "static"]
    assert len(rules) > 100
    assert calls == []  # none at start
    # every rule still builds the URL werkzeug builds, arguments and query string included
    plain = Map([Rule(r.rule, endpoint=r.endpoint, methods=r.methods) for r in rules])
    ours, theirs = app.url_map.bind("box.local"), plain.bind("box.local")
    for r in rules:
        values = {name: 3 if type(r._converters[name]).__name__ in ("IntegerConverter", "NumberConverter")
                  else "a b/é" for name in r.arguments}
        values["extra"] = "1"
        method = sorted(r.methods - {"HEAD", "OPTIONS"})[0]
        assert ours.build(r.endpoint, values, method=method) == theirs.build(r.endpoint, values, method=method)
    assert calls  # made on demand


def test_compiled_templates_are_kept_between_starts_and_one_cut_short_is_compiled_again(tmp_path):
    from companion.web.app import compile_templates

    cache = tmp_path / "cache" / "templates"
    config = {"DATA_DIR": str(tmp_path / "data"), "GPIO": "off", "TEMPLATE_CACHE": str(cache)}

    def start():
        app = create_app(config)
        compiled = []
        original = app.jinja_env.compile
        app.jinja_env.compile = lambda source, name=None, *a, **k: compiled.append(name) or original(source, name, *a, **k)
        return app, compiled

    app, compiled = start()
    names = app.jinja_env.list_templates(extensions=["html"])
    assert compile_templates(app) == len(names) > 20 and sorted(compiled) == sorted(names)
    files = sorted(cache.iterdir())
    assert len(files) == len(names)
    again, compiled = start()  # the next start reads them back
    assert compile_templates(again) == len(names) and compiled == []
    files[0].write_bytes(files[0].read_bytes()[:10])  # (a power cut, say)
    third, compiled = start()
    assert compile_templates(third) == len(names) and len(compiled) == 1
    for name in names:  # a template read back is the one compiled (its blocks, its root's code)
        ours, theirs = third.jinja_env.get_template(name), app.jinja_env.get_template(name)
        assert sorted(ours.blocks) == sorted(theirs.blocks)
        assert ours.root_render_func.__code__.co_code == theirs.root_render_func.__code__.co_code


def test_a_full_card_keeps_no_compiled_template_and_every_page_still_renders(tmp_path, monkeypatch):
    import errno

    import jinja2.bccache

    from companion.web.app import compile_templates

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    cache = tmp_path / "cache" / "templates"
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "GPIO": "off", "TEMPLATE_CACHE": str(cache)})
    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", full)
    names = app.jinja_env.list_templates(extensions=["html"])
    assert compile_templates(app) == len(names) > 20  # each compiled, none kept
    assert list(cache.iterdir()) == []


def test_serve_precompile_fills_the_data_folder_s_cache_and_a_start_then_compiles_none(tmp_path):
    """``companion serve --precompile`` (what systemd/install.sh runs after an install or an upgrade) compiles
    every template into the data folder's cache and exits, serving nothing; the app a start then builds over
    that folder reads every one back."""
    import subprocess
    import sys

    from companion.web.app import compile_templates

    p = subprocess.run([sys.executable, "-m", "companion", "serve", "--precompile", "--gpio", "off",
                        "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    cache = tmp_path / "cache" / "templates"
    assert p.stdout.startswith(f"{len(list(cache.iterdir()))} templates compiled into {cache}")
    app = create_app({"DATA_DIR": str(tmp_path / "other"), "GPIO": "off", "TEMPLATE_CACHE": str(cache)})
    compiled = []
    original = app.jinja_env.compile
    app.jinja_env.compile = lambda source, name=None, *a, **k: compiled.append(name) or original(source, name, *a, **k)
    assert compile_templates(app) == len(app.jinja_env.list_templates(extensions=["html"])) and compiled == []
