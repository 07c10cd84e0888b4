package web

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the Prometheus series of one Server.
type metrics struct {
	latency  *prometheus.HistogramVec // by form and outcome
	queries  *prometheus.CounterVec   // by form and outcome
	active   prometheus.Gauge
	stopping prometheus.Gauge
	timeouts prometheus.Counter
	rejected prometheus.Counter
	rows     prometheus.Counter
	aborted  *prometheus.CounterVec // by reason
	requests *prometheus.CounterVec // by route, method, code
}

// Query outcomes in metric labels.
const (
	outcomeOK        = "ok"
	outcomeError     = "error"
	outcomeTimeout   = "timeout"
	outcomeCancelled = "cancelled"
)

func newMetrics(reg *prometheus.Registry, b Backend, s *Server) (*metrics, error) {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wukongd_query_duration_seconds",
			Help:    "Time from receiving a query to the end of its response, by query form and outcome.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"form", "outcome"}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wukongd_queries_total",
			Help: "Queries answered, by query form and outcome (ok, error, timeout, cancelled).",
		}, []string{"form", "outcome"}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "wukongd_queries_active",
			Help: "Queries and graph operations running now.",
		}),
		stopping: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "wukongd_queries_stopping",
			Help: "Queries already answered (timeout, cancel) whose work has not stopped yet; each still holds its slot.",
		}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wukongd_query_timeouts_total",
			Help: "Queries stopped by their timeout.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wukongd_requests_rejected_total",
			Help: "Requests refused with 429 because the concurrency limit was reached.",
		}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wukongd_result_rows_total",
			Help: "Result rows and triples sent.",
		}),
		aborted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wukongd_responses_aborted_total",
			Help: "Answers reset after their 200 had gone out (they had outgrown the response buffer and could not be finished), by reason: timeout, memory, cancelled, client, error.",
		}, []string{"reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wukongd_http_requests_total",
			Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
	}
	cs := []prometheus.Collector{m.latency, m.queries, m.active, m.stopping, m.timeouts, m.rejected, m.rows, m.aborted, m.requests}
	if fs, ok := b.(FabricStatser); ok {
		cs = append(cs, &fabricCollector{src: fs})
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func (m *metrics) observeQuery(form Form, outcome string, seconds float64) {
	m.latency.WithLabelValues(form.String(), outcome).Observe(seconds)
	m.queries.WithLabelValues(form.String(), outcome).Inc()
	if outcome == outcomeTimeout {
		m.timeouts.Inc()
	}
}

// fabricCollector exposes the backend's cumulative fabric counters.
type fabricCollector struct{ src FabricStatser }

var (
	fabricOpsDesc = prometheus.NewDesc("wukongd_fabric_operations_total",
		"Fabric operations (one-sided reads and messages) between nodes.", []string{"kind"}, nil)
	fabricBytesDesc = prometheus.NewDesc("wukongd_fabric_bytes_total",
		"Bytes moved by fabric operations between nodes.", []string{"kind"}, nil)
)

func (f *fabricCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- fabricOpsDesc
	ch <- fabricBytesDesc
}

func (f *fabricCollector) Collect(ch chan<- prometheus.Metric) {
	st := f.src.FabricStats()
	ch <- prometheus.MustNewConstMetric(fabricOpsDesc, prometheus.CounterValue, float64(st.Reads), "read")
	ch <- prometheus.MustNewConstMetric(fabricOpsDesc, prometheus.CounterValue, float64(st.Messages), "message")
	ch <- prometheus.MustNewConstMetric(fabricBytesDesc, prometheus.CounterValue, float64(st.ReadBytes), "read")
	ch <- prometheus.MustNewConstMetric(fabricBytesDesc, prometheus.CounterValue, float64(st.MessageBytes), "message")
}
