package api_test

import "net/http"

type httpReq = http.Request
