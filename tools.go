//go:build tools

// Package tools pins the modules wukongd's packages are written against, so
// that `go mod tidy` keeps them while the packages that import them are being
// written. Remove an import here once a real package imports it.
package tools

import (
	_ "github.com/RoaringBitmap/roaring/v2"
	_ "github.com/antlr4-go/antlr/v4"
	_ "github.com/chromedp/chromedp"
	_ "github.com/gin-gonic/gin"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/rs/zerolog"
	_ "github.com/schollz/progressbar/v3"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
)
