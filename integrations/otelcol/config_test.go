package faultlineconnector

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := confmap.Validate(cfg); err != nil {
		t.Fatalf("default config: %v", err)
	}
	if cfg.DiagnoseInterval != DefaultDiagnoseInterval || cfg.MaxJobs != DefaultMaxJobs || cfg.DefaultJob != "default" {
		t.Errorf("defaults not as documented: %+v", cfg)
	}
}

func TestConfigUnmarshal(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{
		"job_attributes":    []any{"slurm.job.id"},
		"diagnose_interval": "250ms",
		"max_jobs":          8,
	})
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.DiagnoseInterval != 250*time.Millisecond || cfg.MaxJobs != 8 || cfg.JobAttributes[0] != "slurm.job.id" {
		t.Errorf("not decoded: %+v", cfg)
	}
	// What was not given keeps its default.
	if cfg.MaxEvidenceBytes != DefaultMaxEvidenceBytes || cfg.HostAttributes[0] != "host.name" {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

func TestConfigRejectsUnknownKeys(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"diagnose_intervall": "1s"}).Unmarshal(cfg)
	if err == nil || !strings.Contains(err.Error(), "diagnose_intervall") {
		t.Fatalf("unknown key accepted or not named: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"interval", func(c *Config) { c.DiagnoseInterval = time.Millisecond }, "diagnose_interval"},
		{"idle", func(c *Config) { c.JobIdleTimeout = time.Second }, "job_idle_timeout"},
		{"jobs", func(c *Config) { c.MaxJobs = 0 }, "max_jobs"},
		{"streams", func(c *Config) { c.MaxStreamsPerJob = 0 }, "max_streams_per_job"},
		{"evidence", func(c *Config) { c.MaxEvidenceBytes = 10 }, "max_evidence_bytes"},
		{"session", func(c *Config) { c.MaxSessionBytes = 10 }, "max_session_bytes"},
		{"empty attribute", func(c *Config) { c.HostAttributes = []string{""} }, "host_attributes[0]"},
		{"default job", func(c *Config) { c.DefaultJob = "" }, "default_job"},
		{"rules", func(c *Config) { c.Rules = "/no/such/rules.flrules" }, "/no/such/rules.flrules"},
		{"tz", func(c *Config) { c.TZ = "Europe/Berlin" }, "tz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			tc.edit(cfg)
			err := confmap.Validate(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
