"""The parts of the browser lane, scripts/ci/test-browser.py."""
