"""The built-in templates and site assets, shipped as the package ``archive.templates``.

This file makes the folder a regular package: setuptools' editable install maps
``archive.templates`` to this top-level folder only for a package it can import, and
``importlib.resources`` then finds the same files in a checkout and in an installed wheel.
"""
