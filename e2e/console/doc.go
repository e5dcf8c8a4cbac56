// Package console holds the browser tests of the web console
// (docs/CONSOLE.md): the real system (internal/apptest: the api with the
// embedded console, and a worker) driven through Debian's Chromium, headless,
// by chromedp, the way a person uses it: by labels, roles and visible text.
// Every page is checked with axe-core and for requests outside the api's
// origin. Without Chromium or a console build the tests skip, unless
// WHARF_REQUIRE_BROWSER=1 (CI).
package console
