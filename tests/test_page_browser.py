"""report.py --html in a real browser (headless Chromium through Selenium):
the page loads without a console error, every chart draws, a click on a
column's header reorders that table, and a comparison page draws too.

Needs Chromium and its driver (Debian: apt-get install chromium
chromium-driver); without them the tests skip and say so, except under
.ci/run, which installs them.
"""

import json
import shutil

import pytest

from conftest import KEEP, ROOT, replace_values, run, skip_or_fail

REPORT = str(ROOT / "report.py")
SMALL = str(ROOT / "tests" / "data" / "small.json")
SLOW = str(ROOT / "tests" / "data" / "slow.json")
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)


@pytest.fixture
def browser():
    """A headless Chromium for one test: started after the test's check for
    leftover processes and quit before it, with every renderer it made."""
    binary = next(filter(None, map(shutil.which, BROWSERS)), None)
    driver = next(filter(None, map(shutil.which, DRIVERS)), None)
    if binary is None or driver is None:
        skip_or_fail("the page's browser tests need Chromium and chromedriver "
                     "(Debian: apt-get install chromium chromium-driver); found "
                     "browser %s, driver %s" % (binary, driver))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def page_of(tmp_path, *files):
    target = tmp_path / "page.html"
    proc = run([REPORT] + list(files) + ["--html", str(target)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return target


def open_page(browser, path):
    """Load the page; the console's errors (none expected)."""
    browser.get(path.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    return console_errors(browser)


def console_errors(browser):
    """The console's errors since the last look."""
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def drawn_charts(browser):
    """The page's charts (inline SVG), each with its size on the screen."""
    from selenium.webdriver.common.by import By

    charts = browser.find_elements(By.CSS_SELECTOR, "figure svg")
    return [(chart.is_displayed(), chart.size["width"], chart.size["height"])
            for chart in charts]


def column_values(table, column):
    from selenium.webdriver.common.by import By

    return [json.loads(row.find_elements(By.TAG_NAME, "td")[column]
                       .get_attribute("data-value"))
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]


def test_a_page_loads_draws_and_sorts_in_a_browser(browser, tmp_path):
    from selenium.webdriver.common.by import By

    errors = open_page(browser, page_of(tmp_path, SMALL))
    assert errors == [], errors
    charts = drawn_charts(browser)
    # Each workload's charts (speedups, and scaling where there is a series).
    assert len(charts) >= 6, charts
    assert all(shown and width > 100 and height > 50
               for shown, width, height in charts), charts
    table = browser.find_elements(By.CSS_SELECTOR, "table.sortable")[0]
    headers = table.find_elements(By.CSS_SELECTOR, "thead th")
    column = [h.text.rstrip(" \u2195") for h in headers].index("mean +- std dev")
    before = column_values(table, column)
    assert before != sorted(before), "the file's order is already sorted"
    other = browser.find_elements(By.CSS_SELECTOR, "table.sortable")[1]
    other_before = column_values(other, column)
    assert other_before != sorted(other_before), "the other table is already sorted"
    headers[column].click()
    assert column_values(table, column) == sorted(before)
    headers[column].click()
    assert column_values(table, column) == sorted(before, reverse=True)
    # Only that table moved: the other keeps its own order, not a sorted one.
    assert column_values(other, column) == other_before
    assert console_errors(browser) == []


def test_a_comparison_page_draws_in_a_browser(browser, tmp_path):
    errors = open_page(browser, page_of(tmp_path, SMALL, SLOW))
    assert errors == [], errors
    charts = drawn_charts(browser)
    assert len(charts) >= 3, charts
    assert all(shown and width > 100 and height > 50
               for shown, width, height in charts), charts


def sorted_by_click(browser, table, column):
    """Whether a click on ``column``'s header sorts ``table`` by it."""
    from selenium.webdriver.common.by import By

    before = column_values(table, column)
    table.find_elements(By.CSS_SELECTOR, "thead th")[column].click()
    after = column_values(table, column)
    known = [value for value in after if value is not None]
    return sorted(before, key=lambda v: (v is None, v if v is not None else 0)) == after \
        or known == sorted(known)


def every_table_sorts(browser):
    from selenium.webdriver.common.by import By

    tables = browser.find_elements(By.CSS_SELECTOR, "table.sortable")
    for table in tables:
        assert sorted_by_click(browser, table, 1), table.get_attribute("outerHTML")[:200]
    return len(tables)


def downloaded(browser, index):
    """The bytes the page's download link ``index`` gives, as a list."""
    return browser.execute_async_script("""
        var done = arguments[arguments.length - 1];
        var link = document.querySelectorAll("a[data-raw]")[arguments[0]];
        fetch(link.href).then(r => r.arrayBuffer()).then(b => done(Array.from(new Uint8Array(b))));
    """, index)


HOSTILE = ("<!-- <script>window.pwned = 1</script> </script><script>window.pwned = 2"
           "</script> \u2028 & <b>")


def test_every_table_sorts_and_a_hostile_file_runs_none_of_its_text(browser, tmp_path):
    """Every table of a page of several workloads sorts on its own headers;
    a file whose free text holds comment openers, script tags and line
    separators runs none of it, and its download is the file's bytes."""
    data = json.loads(open(SMALL).read())

    replace_values(data, lambda key, value: HOSTILE if key in (
        "hostname", "platform", "cpu_model_name", "workload_params") else KEEP)
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data))
    errors = open_page(browser, page_of(tmp_path, str(hostile)))
    assert errors == [], errors
    assert browser.execute_script("return window.pwned === undefined")
    assert every_table_sorts(browser) >= 3
    assert bytes(downloaded(browser, 0)) == hostile.read_bytes()
    assert console_errors(browser) == []
