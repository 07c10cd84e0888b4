package web

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The console is plain HTML, CSS and JavaScript written for wukongd,
// embedded in the binary; it loads nothing from the network but this
// server's API.
//
//go:embed console
var consoleFiles embed.FS

func (s *Server) consoleRoutes(r *gin.Engine) {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic("BUG: embedded console missing: " + err.Error())
	}
	files := http.FileServer(http.FS(sub))
	serve := func(c *gin.Context) {
		c.Header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Header("Cache-Control", "no-cache")
		files.ServeHTTP(c.Writer, c.Request)
	}
	r.GET("/", serve)
	r.HEAD("/", serve)
	r.GET("/console/*file", func(c *gin.Context) {
		c.Request.URL.Path = c.Param("file")
		serve(c)
	})
}
