package faultlineconnector

import (
	"errors"
	"fmt"
	"os"
	"time"

	faultline "github.com/faultline/faultline/bindings/go"
)

// Config is the connector's configuration. The collector's confmap decodes
// it strictly: an unknown key is an error at startup, naming the key.
// Every field has a default (createDefaultConfig); README.md lists them.
type Config struct {
	// JobAttributes name the job a log record belongs to: the first of them
	// present on the record's resource (or, failing that, on the record),
	// so that one training job's hosts and ranks are correlated together.
	// Records with none of them go to DefaultJob.
	JobAttributes []string `mapstructure:"job_attributes"`
	// DefaultJob is the job of records that carry no job attribute.
	DefaultJob string `mapstructure:"default_job"`
	// HostAttributes and RankAttributes give a record's host and rank, the
	// first present winning (resource, then record attributes). When
	// neither names them, the library reads them from the source name (a
	// path like node017/rank-3.log) and from the line itself ("[rank3]:",
	// NCCL "host:pid:tid [dev]" prefixes, syslog host names).
	HostAttributes []string `mapstructure:"host_attributes"`
	RankAttributes []string `mapstructure:"rank_attributes"`
	// SourceAttributes name the stream a record belongs to within its job
	// (one file, one pod's container): the first present.
	SourceAttributes []string `mapstructure:"source_attributes"`

	// Rules is a compiled .flrules file or a rule source directory; empty
	// is the catalog built into the library.
	Rules string `mapstructure:"rules"`
	// TZ is the zone of timestamps that carry none ("UTC", "+05:30").
	TZ string `mapstructure:"tz"`

	// DiagnoseInterval is how often a job that received records is
	// correlated again; incidents are emitted when they form or change.
	DiagnoseInterval time.Duration `mapstructure:"diagnose_interval"`
	// JobIdleTimeout: a job without records for this long is diagnosed one
	// last time and forgotten.
	JobIdleTimeout time.Duration `mapstructure:"job_idle_timeout"`
	// MaxJobs bounds the jobs held at once; past it the least recently
	// active job is diagnosed one last time and forgotten.
	MaxJobs int `mapstructure:"max_jobs"`
	// MaxStreamsPerJob bounds the streams a job's live scanning session has
	// open (each holds up to about 1.3 MiB of line buffers); past it the
	// session is closed into an evidence bundle and a new one opened.
	MaxStreamsPerJob int `mapstructure:"max_streams_per_job"`
	// MaxSessionBytes bounds the log bytes a job's live session scans
	// before it is closed into an evidence bundle: the evidence a session
	// holds (several times the bytes of the lines it matched) grows with
	// what it scanned, so this bounds it whatever the input rate.
	MaxSessionBytes int `mapstructure:"max_session_bytes"`
	// MaxEvidenceBytes bounds the evidence a job keeps for re-diagnosis
	// (serialized bundles, not log bytes); past it the oldest bundles are
	// dropped. This is the re-diagnosis window.
	MaxEvidenceBytes int `mapstructure:"max_evidence_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Default values, documented in README.md.
const (
	DefaultDiagnoseInterval = 5 * time.Second
	DefaultJobIdleTimeout   = time.Hour
	DefaultMaxJobs          = 16
	DefaultMaxStreams       = 256
	DefaultMaxSessionBytes  = 1 << 20
	DefaultMaxEvidenceBytes = 8 << 20
)

func createDefaultConfig() *Config {
	return &Config{
		JobAttributes:    []string{"faultline.job.id", "k8s.job.name"},
		DefaultJob:       "default",
		HostAttributes:   []string{"host.name", "k8s.node.name"},
		RankAttributes:   []string{"faultline.rank"},
		SourceAttributes: []string{"log.file.path", "k8s.pod.name", "log.file.name"},
		DiagnoseInterval: DefaultDiagnoseInterval,
		JobIdleTimeout:   DefaultJobIdleTimeout,
		MaxJobs:          DefaultMaxJobs,
		MaxStreamsPerJob: DefaultMaxStreams,
		MaxSessionBytes:  DefaultMaxSessionBytes,
		MaxEvidenceBytes: DefaultMaxEvidenceBytes,
	}
}

// Validate is called by the collector before the connector is created.
func (c *Config) Validate() error {
	var errs []error
	if c.DefaultJob == "" {
		errs = append(errs, errors.New("default_job must not be empty"))
	}
	if c.DiagnoseInterval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("diagnose_interval %v is below 10ms", c.DiagnoseInterval))
	}
	if c.JobIdleTimeout < c.DiagnoseInterval {
		errs = append(errs, fmt.Errorf("job_idle_timeout %v is shorter than diagnose_interval %v", c.JobIdleTimeout, c.DiagnoseInterval))
	}
	if c.MaxJobs < 1 {
		errs = append(errs, fmt.Errorf("max_jobs %d must be at least 1", c.MaxJobs))
	}
	if c.MaxStreamsPerJob < 1 {
		errs = append(errs, fmt.Errorf("max_streams_per_job %d must be at least 1", c.MaxStreamsPerJob))
	}
	if c.MaxSessionBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("max_session_bytes %d is below 64 KiB", c.MaxSessionBytes))
	}
	if c.MaxEvidenceBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("max_evidence_bytes %d is below 64 KiB", c.MaxEvidenceBytes))
	}
	for name, list := range map[string][]string{"job_attributes": c.JobAttributes, "host_attributes": c.HostAttributes,
		"rank_attributes": c.RankAttributes, "source_attributes": c.SourceAttributes} {
		for i, a := range list {
			if a == "" {
				errs = append(errs, fmt.Errorf("%s[%d] is empty", name, i))
			}
		}
	}
	if c.Rules != "" {
		if _, err := os.Stat(c.Rules); err != nil {
			errs = append(errs, fmt.Errorf("rules: %w", err))
		}
	}
	if c.TZ != "" {
		// The library is the judge of what a zone is: a session rejects one
		// it cannot apply (regional names, for instance).
		if err := checkTZ(c.TZ); err != nil {
			errs = append(errs, fmt.Errorf("tz %q: %w", c.TZ, err))
		}
	}
	return errors.Join(errs...)
}

func checkTZ(tz string) error {
	eng, err := faultline.Default()
	if err != nil {
		return err
	}
	defer eng.Close()
	s, err := eng.NewSession(faultline.Options{TZ: tz, Threads: 1})
	if err != nil {
		return err
	}
	return s.Close()
}
