"""The API's documentation pages, whole from this machine (issue 60: ``/docs`` was a blank page
offline, FastAPI's default pages loading Swagger UI from a CDN): ``/docs`` (Swagger UI) and
``/redoc`` (ReDoc) as FastAPI's "self-hosting JavaScript and CSS for docs" recipe makes them,
their scripts, style sheet and icon served under :data:`ASSETS` from the files the
``fastapi-offline`` package ships (a dependency of ``paohuzi[service]``). A page asks for
nothing but this server's own paths: no font, no validator badge, no CDN."""

# No ``from __future__ import annotations``: FastAPI reads the pages' annotations.

from typing import Any

from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request

#: Where the pages' scripts and style sheet are served (a static folder: no route of the API).
ASSETS = "/docs/assets"
#: The pages' paths (no part of the OpenAPI schema).
DOCS, REDOC, OAUTH2_REDIRECT = "/docs", "/redoc", "/docs/oauth2-redirect"
#: Swagger UI's settings beside FastAPI's own: no online validator (its badge is an image
#: from another site).
SWAGGER_UI_PARAMETERS: dict[str, Any] = {"validatorUrl": None}


def fastapi_kwargs() -> dict[str, Any]:
    """What :class:`fastapi.FastAPI` is made with so that it adds none of its CDN pages
    (:func:`add` adds these)."""
    return {
        "docs_url": None,
        "redoc_url": None,
        "swagger_ui_oauth2_redirect_url": OAUTH2_REDIRECT,
        "swagger_ui_parameters": SWAGGER_UI_PARAMETERS,
    }


def assets_dir() -> str:
    """The folder of Swagger UI's and ReDoc's files in the installed ``fastapi-offline``."""
    from pathlib import Path

    import fastapi_offline

    return str(Path(fastapi_offline.__file__).resolve().parent / "static")


def add(app: Any) -> None:
    """``/docs``, ``/docs/oauth2-redirect`` and ``/redoc`` on ``app`` (made with
    :func:`fastapi_kwargs`), their files under :data:`ASSETS`."""
    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")

    def root(request: Request) -> str:
        return str(request.scope.get("root_path", ""))

    @app.get(DOCS, include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        at = root(request)
        return get_swagger_ui_html(
            openapi_url=f"{at}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{at}{OAUTH2_REDIRECT}",
            swagger_js_url=f"{at}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{at}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{at}{ASSETS}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC, include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        at = root(request)
        return get_redoc_html(
            openapi_url=f"{at}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{at}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{at}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
