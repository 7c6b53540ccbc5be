// Package faultlineconnector is an OpenTelemetry Collector connector of type
// "faultline": it reads log records from any logs pipeline (filelog, OTLP,
// journald, k8s), groups them into jobs, has libfaultline diagnose each job
// as its records arrive, and emits one log record per incident when it
// forms or changes, plus metrics (incidents, evidence, bytes and lines
// diagnosed).
//
// The collector builds one connector instance per pair of pipeline types it
// links (logs->logs, logs->metrics), and both instances are fed the same
// records. They share one diagnosing core (keyed by the configuration the
// collector hands both, as the contrib sharedcomponent helper does), and
// only one of them feeds it, so each record is diagnosed once whichever
// outputs are configured.
package faultlineconnector

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TypeStr is the connector's type in collector configuration.
const TypeStr = "faultline"

var componentType = component.MustNewType(TypeStr)

// NewFactory returns the connector's factory, for otelcol.Factories.
func NewFactory() connector.Factory {
	return connector.NewFactory(componentType,
		func() component.Config { return createDefaultConfig() },
		connector.WithLogsToLogs(createLogsToLogs, component.StabilityLevelAlpha),
		connector.WithLogsToMetrics(createLogsToMetrics, component.StabilityLevelAlpha))
}

// cores holds the core a connector's instances share while any of them
// exists, by the configuration they were created with.
var (
	coresMu sync.Mutex
	cores   = map[*Config]*core{}
)

func getCore(set connector.Settings, cfg *Config) *core {
	coresMu.Lock()
	defer coresMu.Unlock()
	c := cores[cfg]
	if c == nil {
		c = newCore(set, cfg)
		cores[cfg] = c
	}
	c.instances++
	return c
}

// dropCore forgets c once its last instance has shut down, so a collector
// that reloads its configuration gets a new one.
func dropCore(c *core) {
	coresMu.Lock()
	defer coresMu.Unlock()
	c.instances--
	if c.instances == 0 && cores[c.cfg] == c {
		delete(cores, c.cfg)
	}
}

func createLogsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Logs, error) {
	c := getCore(set, cfg.(*Config))
	c.setLogsNext(next)
	return &instance{core: c, feeds: true}, nil
}

func createLogsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	c := getCore(set, cfg.(*Config))
	c.setMetricsNext(next)
	return &instance{core: c, metricsOnly: true}, nil
}

// instance is what the collector holds for one pipeline pair.
type instance struct {
	core *core
	// feeds is set on the logs->logs instance; the logs->metrics one feeds
	// the core only when no logs->logs instance exists (both get the same
	// records, see the package comment).
	feeds       bool
	metricsOnly bool
	started     bool
	shut        bool
	mu          sync.Mutex
}

func (i *instance) Start(ctx context.Context, host component.Host) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.started {
		return nil
	}
	if err := i.core.start(ctx); err != nil {
		return err
	}
	i.started = true
	return nil
}

func (i *instance) Shutdown(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.shut {
		return nil
	}
	i.shut = true
	var err error
	if i.started {
		err = i.core.stop(ctx, !i.metricsOnly, i.metricsOnly)
	}
	dropCore(i.core)
	return err
}

func (i *instance) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (i *instance) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if i.metricsOnly && i.core.hasLogsNext() {
		return nil // the logs->logs instance feeds the core these records
	}
	return i.core.consume(ctx, ld)
}
