"""The web adapter: Flask app factory and blueprints over the core (see app.py)."""
