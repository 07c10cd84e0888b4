package web

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/sparql"
)

// TimeoutStatus is the status of a query stopped by its timeout: 504
// Gateway Timeout, so that clients can tell it from 503 (not ready) and 429
// (too many concurrent queries).
const TimeoutStatus = http.StatusGatewayTimeout

// QueryMemoryStatus is the status of a query stopped because it needed
// more memory than its budget (--max-query-memory) or made a string past
// --max-value-bytes: 507 Insufficient Storage, so that clients can tell it
// from a timeout (504) and from the server's budget being used by every
// query together (503, server_memory, with Retry-After).
const QueryMemoryStatus = http.StatusInsufficientStorage

// statusClientClosed is logged (never sent) when the client went away.
const statusClientClosed = 499

// apiError is the JSON body of every error response.
type apiError struct {
	Status  int    `json:"status"`
	Error   string `json:"error"`   // a short machine-readable kind
	Message string `json:"message"` // for humans
	QueryID string `json:"queryId,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

// httpError is an error the web layer raises itself with a fixed status.
type httpError struct {
	status int
	kind   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func newHTTPError(status int, kind, msg string) error {
	return &httpError{status: status, kind: kind, msg: msg}
}

// statusOf maps any error to its HTTP response. It is the one place where
// errors become statuses.
func statusOf(err error) apiError {
	var he *httpError
	var se *sparql.SyntaxError
	var le *loader.SyntaxError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return apiError{Status: he.status, Error: he.kind, Message: he.msg}
	case errors.As(err, &se):
		return apiError{Status: http.StatusBadRequest, Error: "syntax_error", Message: se.Msg, Line: se.Line, Col: se.Col}
	case errors.As(err, &le):
		return apiError{Status: http.StatusBadRequest, Error: "data_syntax_error", Message: le.Error(), Line: le.Line, Col: le.Col}
	case errors.As(err, &mbe):
		return apiError{Status: http.StatusRequestEntityTooLarge, Error: "body_too_large", Message: err.Error()}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return apiError{Status: http.StatusRequestTimeout, Error: "request_timeout", Message: "the request did not arrive within the server's read timeout"}
	case errors.Is(err, context.DeadlineExceeded):
		return apiError{Status: TimeoutStatus, Error: "timeout", Message: "the query ran past its timeout and was stopped"}
	case errors.Is(err, context.Canceled):
		return apiError{Status: statusClientClosed, Error: "cancelled", Message: "the query was cancelled"}
	case errors.Is(err, ErrNotFound):
		return apiError{Status: http.StatusNotFound, Error: "not_found", Message: err.Error()}
	case errors.Is(err, ErrUnsupported):
		return apiError{Status: http.StatusNotImplemented, Error: "unsupported", Message: err.Error()}
	case errors.Is(err, ErrUnsupportedMediaType):
		return apiError{Status: http.StatusUnsupportedMediaType, Error: "unsupported_media_type", Message: err.Error()}
	case errors.Is(err, ErrForbidden):
		return apiError{Status: http.StatusForbidden, Error: "forbidden", Message: err.Error()}
	case errors.Is(err, ErrBadRequest):
		return apiError{Status: http.StatusBadRequest, Error: "bad_request", Message: err.Error()}
	case errors.Is(err, ErrUpstream):
		return apiError{Status: http.StatusBadGateway, Error: "upstream", Message: err.Error()}
	case errors.Is(err, ErrQueryMemory):
		return apiError{Status: QueryMemoryStatus, Error: "query_memory", Message: err.Error()}
	case errors.Is(err, ErrValueTooLarge):
		return apiError{Status: QueryMemoryStatus, Error: "value_too_large", Message: err.Error()}
	case errors.Is(err, ErrServerMemory):
		return apiError{Status: http.StatusServiceUnavailable, Error: "server_memory", Message: err.Error()}
	case errors.Is(err, ErrNotReady):
		return apiError{Status: http.StatusServiceUnavailable, Error: "not_ready", Message: err.Error()}
	}
	return apiError{Status: http.StatusInternalServerError, Error: "internal", Message: err.Error()}
}

// writeError sends err as JSON unless the client is gone. It records the
// error for the request log.
func writeError(c *gin.Context, err error) {
	ae := statusOf(err)
	ae.Message = clipMessage(ae.Message)
	ae.QueryID = queryIDOf(c)
	_ = c.Error(err)
	var he *httpError
	if ae.Status == statusClientClosed && !errors.As(err, &he) {
		// The client went away: nothing reaches it; the status is for the log.
		c.Status(statusClientClosed)
		c.Abort()
		return
	}
	switch ae.Status {
	case http.StatusUnauthorized:
		c.Header("WWW-Authenticate", `Bearer realm="wukongd"`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		c.Header("Retry-After", "1")
	}
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(ae.Status, ae)
}
