/*
 * faultline.h -- the stable C ABI of libfaultline.
 *
 * faultline diagnoses GPU training and inference failures from the logs a job
 * leaves behind. A ruleset (a compiled catalog of failure signatures) is
 * loaded once; a session scans sources (files, directories, compressed files,
 * standard input, or pushed streams) into evidence; finishing the session
 * correlates the evidence across ranks and hosts into a report that names the
 * initiating failure apart from its collateral.
 *
 * This header is the specification: what is not in it is not API.
 *
 * Conventions
 * - Every function that can fail returns fl_status: FL_OK (0) on success,
 *   FL_DONE (1) where an iteration ends, a negative FL_ERR_* code otherwise.
 *   Negative codes are pinned forever. Each function lists the codes it can
 *   return ("Returns:"); FL_ERR_NOMEM and FL_ERR_INTERNAL are possible
 *   wherever a function allocates, and are listed there.
 * - Error detail lives on the handle: fl_session_last_error() is valid until
 *   the next call on that session. Constructors that have no handle yet take
 *   an `fl_error **err` out-parameter (may be NULL) freed with fl_error_free().
 *   Nothing is thread-local.
 * - Parameter order, one rule for the whole header: a constructor (a function
 *   that makes a handle from no handle: fl_ruleset_load_*, fl_session_new,
 *   fl_report_from_bundles) takes `T **out` first; every other function
 *   takes its handle first, then its inputs, then its out-parameters (the
 *   value before its length), and `fl_error **err` always comes last.
 * - Ownership: the caller owns what a `T **out` receives; every
 *   fl_T_free(NULL) is a no-op. A `const` pointer that a function returns
 *   is borrowed and says until when it is valid. Input buffers are never
 *   kept after a call returns.
 * - Size-versioned structs (options, totals and the newer views) start with
 *   `uint32_t size`. Initialise options with FL_SESSION_OPTIONS_INIT or
 *   fl_session_options_init(opts, sizeof *opts), which never writes past the
 *   size it is given (as libgit2's *_options_init(opts, version)). Such
 *   structs only grow at the end: the library fills defaults for the fields
 *   a shorter struct lacks and rejects sizes from the future with
 *   FL_ERR_INVALID_ARG. For a struct the library fills (fl_report_totals,
 *   fl_input_error_view, ...), set `size` to sizeof the struct first; the
 *   library writes at most that many bytes and stores how many it wrote.
 * - Times are microseconds since the Unix epoch, UTC; FL_TIME_UNSET when
 *   unknown.
 *
 * Thread-safety
 * - A loaded fl_ruleset is immutable: any number of threads and sessions may
 *   share it concurrently. Free it after every session using it is freed.
 * - An fl_session is used by one thread at a time, except fl_session_cancel(),
 *   which any thread may call at any time while the session lives. A call
 *   made while another call on the same session is in progress (from a
 *   second thread, or from inside one of the session's callbacks) returns
 *   FL_ERR_BUSY and changes nothing, fl_session_last_error() included;
 *   fl_session_error_count() answers as of the last call that ended.
 *   fl_session_free() and fl_session_last_error() are not guarded: calling
 *   them during another call remains undefined.
 * - An fl_report is immutable once returned: any number of threads may read it.
 * - Callbacks run on the thread that called into the library, never after the
 *   call that triggered them returns.
 *
 * ABI and versions
 * - The version lives in one place, CMake's project(VERSION), and is
 *   generated into faultline_version.h (included below), the Python
 *   package's metadata and, through this header, the Go binding's check.
 * - While the major version is 0, a minor release (0.2 -> 0.3) may change
 *   the ABI, and says how in "Changes" below; a patch release never does.
 *   The soname therefore carries the minor: libfaultline.so.0.3. From 1.0 on
 *   the soname is libfaultline.so.MAJOR and the ABI only grows within a
 *   major. Bindings check at run time that the loaded library has the
 *   header's major and minor (0.x) or major and at least its minor (1.0+).
 * - The frozen set is every fl_* symbol except fl_x_*: functions named
 *   fl_x_* are experimental (bench and rule-tuning tools), outside the
 *   frozen set, exported under their own symbol version (FAULTLINE_X), and
 *   may change or go in any release.
 * - tests/install/abi/ holds abidw's dump of the release's ABI; the install
 *   test runs abidiff against it (.ci/test.d/install.sh).
 *
 * Changes
 * - 0.3: fl_session_options_init(opts, size) takes the caller's struct size
 *   (it returned void and took no size: a larger future struct would have
 *   been written past an older caller's); the one incompatible change, hence
 *   the soname libfaultline.so.0.3. fl_ruleset_signal_costs_json (0.2, never
 *   in a release baseline) became fl_x_ruleset_signal_costs_json. Added:
 *   fl_report_input_error*, fl_report_incident_collateral,
 *   fl_report_ignored*, fl_report_job_window, fl_report_html. Behaviour: FL_ERR_BUSY for a
 *   call made during another call on the session; FL_ERR_NOT_FOUND from
 *   fl_session_add_path/add_range for a path that does not exist;
 *   fl_session_finish fails with FL_ERR_IO when the paths given yielded no
 *   log, and with FL_ERR_CANCELLED whenever the session was cancelled.
 *   Rulesets: a file's stored pattern database is used only when its MAC
 *   verifies under this installation's key (fl_ruleset_compile signs what
 *   it writes); any other file is recompiled from its patterns. Added:
 *   fl_ruleset_load_info, fl_session_snapshot (a report of a live
 *   session that goes on taking input). Progress (fl_progress_cb) counts input bytes: a
 *   .gz/.zst file by the compressed bytes read, against its size on disk
 *   in the total (0.2 counted its decompressed bytes and left it out of the
 *   total).
 *   Also added within 0.3 (compatible, size-versioned): fields appended
 *   to fl_session_options (max_source_bytes, max_decompressed_bytes,
 *   time_budget_s) and to fl_report_totals (ranks_seen, ranks_kept,
 *   hosts_seen, hosts_kept, capped with the FL_CAPPED_* bits); added
 *   fl_report_input_warning*. Behaviour: a FIFO is opened without blocking
 *   and waits for its writer (fl_session_cancel and the time budget end the
 *   wait); a stream that is not a regular file and starts with a NUL byte
 *   is an input error (binary); special files met in a directory are
 *   warnings; a source cut at a limit or truncated mid-scan still counts as
 *   a log for fl_session_finish (the bytes read are diagnosed).
 *   Also added within 0.3 (compatible): fl_report_incident_id,
 *   fl_incident_id, fl_report_incident_action, fl_report_attempt_count,
 *   fl_report_attempt, fl_report_incident_history,
 *   fl_session_add_prior_bundle; fields appended to fl_session_options
 *   (max_restarts_per_rule, max_restarts_per_host, restart_window_s).
 */
#ifndef FAULTLINE_FAULTLINE_H_
#define FAULTLINE_FAULTLINE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FL_BUILDING_LIBRARY) && defined(__GNUC__)
#define FL_API __attribute__((visibility("default")))
#else
#define FL_API
#endif

/* ---- Versions ------------------------------------------------------------ */

/* FL_VERSION_MAJOR, FL_VERSION_MINOR, FL_VERSION_PATCH, generated from the
 * build's project(VERSION). */
#include <faultline/faultline_version.h>

#define FL_VERSION_NUMBER \
  (FL_VERSION_MAJOR * 10000 + FL_VERSION_MINOR * 100 + FL_VERSION_PATCH)

/* The library's FL_VERSION_NUMBER; compare with the header's. @since 0.1 */
FL_API unsigned fl_version_number(void);
/* "MAJOR.MINOR.PATCH", static storage. @since 0.1 */
FL_API const char *fl_version_string(void);

/* ---- Status codes and errors --------------------------------------------- */

typedef int fl_status;

#define FL_OK 0
#define FL_DONE 1
#define FL_ERR_INVALID_ARG (-1)
#define FL_ERR_NOMEM (-2)
#define FL_ERR_IO (-3)
#define FL_ERR_PARSE (-4)
#define FL_ERR_RULESET (-5)
#define FL_ERR_RULESET_VERSION (-6)
#define FL_ERR_BUSY (-7)
#define FL_ERR_BUFFER_TOO_SMALL (-8)
#define FL_ERR_CANCELLED (-9)
#define FL_ERR_INTERNAL (-10)
#define FL_ERR_NOT_FOUND (-11)

/* A short constant name for a status ("FL_ERR_IO"), static storage. @since 0.1 */
FL_API const char *fl_status_str(fl_status rc);

/* Error detail for constructors that have no handle yet. @since 0.1 */
typedef struct fl_error fl_error;
/* The message, valid until fl_error_free(err). @since 0.1 */
FL_API const char *fl_error_message(const fl_error *err);
/* The status the error carries. @since 0.1 */
FL_API fl_status fl_error_code(const fl_error *err);
/* Frees an error; NULL is a no-op. @since 0.1 */
FL_API void fl_error_free(fl_error *err);

/* Frees a buffer the library allocated for the caller (JSON strings).
 * @since 0.1 */
FL_API void fl_free(void *p);

/* Parses an RFC 3339 / ISO 8601 time ("2026-11-02T13:46:41Z", naive times
 * are UTC) or epoch seconds ("1762091201.5") into microseconds UTC.
 * Returns: FL_OK; FL_ERR_PARSE when it is neither; FL_ERR_INVALID_ARG (a NULL
 * argument); FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_time_parse(const char *text, int64_t *out_us);

/* ---- Rulesets ------------------------------------------------------------ */

typedef struct fl_ruleset fl_ruleset;

/* Loads the ruleset embedded in the library.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (out is NULL); FL_ERR_RULESET;
 * FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_ruleset_load_default(fl_ruleset **out, fl_error **err);
/* Loads a compiled .flrules file, or compiles a rule source directory on the
 * fly. The file's serialized pattern database is used only when the file
 * carries a MAC that verifies under this installation's ruleset key (files
 * written by fl_ruleset_compile / `faultline compile` here) and was built for
 * this CPU and library version; any other file has its database recompiled
 * from the stored patterns (slower: ~0.2 s for the default ruleset), never
 * deserialized. The key file: $FAULTLINE_RULESET_KEY_FILE, else
 * $XDG_CONFIG_HOME/faultline/ruleset.key, else
 * ~/.config/faultline/ruleset.key; loading never creates it.
 * Returns: FL_OK; FL_ERR_IO (cannot be read, or does not exist);
 * FL_ERR_RULESET (not a valid ruleset: the message names the file, and the
 * rule id and field for rule sources); FL_ERR_RULESET_VERSION (a compiled
 * ruleset from an incompatible version); FL_ERR_INVALID_ARG (NULL out or
 * path); FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_ruleset_load_file(fl_ruleset **out, const char *path,
                                      fl_error **err);
/* Loads a compiled ruleset from memory, as fl_ruleset_load_file loads a
 * file; the buffer is copied.
 * Returns: FL_OK; FL_ERR_RULESET; FL_ERR_RULESET_VERSION; FL_ERR_INVALID_ARG
 * (NULL out, or NULL data with len > 0); FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * @since 0.1 */
FL_API fl_status fl_ruleset_load_memory(fl_ruleset **out, const void *data,
                                        size_t len, fl_error **err);
/* Compiles the rule source directory src_dir into out_path, atomically
 * (temporary file and rename). Errors name the file, rule id and field.
 * Since 0.2 the file is signed with this installation's ruleset key (see
 * fl_ruleset_load_file), which is created, mode 0600, when absent; when no
 * key can be had the file is written unsigned and loads by recompiling.
 * Returns: FL_OK; FL_ERR_RULESET; FL_ERR_IO (the output cannot be written,
 * a source cannot be read); FL_ERR_INVALID_ARG (a NULL path); FL_ERR_NOMEM;
 * FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_ruleset_compile(const char *src_dir, const char *out_path,
                                    fl_error **err);
/* Frees a ruleset; NULL is a no-op. @since 0.1 */
FL_API void fl_ruleset_free(fl_ruleset *rs);

/* Name and version strings, valid while the ruleset lives ("" for NULL).
 * @since 0.1 */
FL_API const char *fl_ruleset_name(const fl_ruleset *rs);
FL_API const char *fl_ruleset_version(const fl_ruleset *rs);
/* How the ruleset's pattern database was obtained, one sentence that starts
 * with "built-in:", "authenticated:" (MAC verified, stored database used) or
 * "untrusted:" (recompiled from the stored patterns, and why), valid while
 * the ruleset lives ("" for NULL). @since 0.3 */
FL_API const char *fl_ruleset_load_info(const fl_ruleset *rs);
/* Number of rules (0 for NULL). @since 0.1 */
FL_API size_t fl_ruleset_rule_count(const fl_ruleset *rs);
/* A JSON array of every rule's summary (id, title, reference, category,
 * tags, layer, signals). *json is NUL-terminated, owned by the caller, freed
 * with fl_free().
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL rs or json); FL_ERR_NOMEM;
 * FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_ruleset_rules_json(const fl_ruleset *rs, char **json,
                                       size_t *len);
/* The full entry of one rule as a JSON object, freed with fl_free().
 * Returns: FL_OK; FL_ERR_NOT_FOUND (no rule has that id);
 * FL_ERR_INVALID_ARG (a NULL argument); FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * @since 0.1 */
FL_API fl_status fl_ruleset_rule_json(const fl_ruleset *rs, const char *id,
                                      char **json, size_t *len);

/* The full entry of one rule as text, like an encyclopedia page: root cause,
 * symptoms and why, how to confirm, fix, verify, prevention, fingerprint,
 * related, sources. Freed with fl_free(). Returns: as fl_ruleset_rule_json.
 * @since 0.1 */
FL_API fl_status fl_ruleset_rule_text(const fl_ruleset *rs, const char *id,
                                      char **text, size_t *len);

/* ---- Evidence ------------------------------------------------------------ */

/* One matched line. fl_evidence_view and fl_incident_view are frozen for ABI
 * major 0 (arrays of them are filled by element size): a larger view will
 * come with new functions that take the view's size. Borrowed: valid until
 * the callback returns, or, when filled by fl_report_evidence(), while the
 * report lives. */
typedef struct fl_evidence_view {
  const char *source;   /* path as given, "-" for stdin, or a stream's name */
  uint64_t line;        /* 1-based line number in the (decompressed) source */
  uint64_t offset;      /* byte offset of the line start */
  int64_t time_us;      /* FL_TIME_UNSET when unknown */
  const char *time_source; /* "parsed", "inherited", "inferred_year",
                              "monotonic_anchored", "none" */
  int64_t rank;         /* -1 when unknown */
  const char *host;     /* NULL when unknown */
  const char *rule;     /* rule id */
  const char *signal;   /* signal id */
  const char *text;     /* the line, at most 4096 bytes, valid UTF-8 */
  const char *fields_json; /* named captures as a JSON object, "{}" if none */
} fl_evidence_view;

#define FL_TIME_UNSET INT64_MIN

/* Called for each evidence record as it is found, in source then offset
 * order within a source. The record carries what the scan knows then: ranks
 * learnt later (a kernel line's GPU mapped to a rank through NCCL init lines,
 * a pid through the OOM killer) appear only in the report. */
typedef void (*fl_evidence_cb)(void *user, const fl_evidence_view *ev);
/* Progress: input bytes read so far and their total (0 when unknown, as for
 * standard input). A file counts by its size on disk: for a .gz or .zst
 * file, the compressed bytes read (since 0.3). Return non-zero to cancel
 * the scan. */
typedef int (*fl_progress_cb)(void *user, uint64_t done, uint64_t total);

/* ---- Sessions ------------------------------------------------------------ */

typedef struct fl_session fl_session;

typedef struct fl_clock_offset {
  const char *host;
  double seconds; /* added to that host's timestamps to reach true time;
                     finite and within +-1e9, else FL_ERR_INVALID_ARG */
} fl_clock_offset;

typedef struct fl_session_options {
  uint32_t size;          /* sizeof(fl_session_options) */
  uint32_t threads;       /* 0: one per core */
  int64_t job_start_us;   /* FL_TIME_UNSET: derived from the logs */
  int64_t job_end_us;     /* FL_TIME_UNSET: derived from the logs */
  const fl_clock_offset *clock_offsets; /* copied at fl_session_new */
  size_t clock_offset_count;
  const char *tz;         /* zone of naive timestamps: "UTC", "+05:30",
                             "-0800", "UTC+05:30", "Etc/GMT+8"; regional
                             names (tz database rules) are rejected with
                             FL_ERR_INVALID_ARG; NULL is UTC */
  fl_evidence_cb on_evidence;
  void *evidence_user;
  fl_progress_cb on_progress;
  void *progress_user;
  /* Limits on reading the inputs (added in 0.3; a caller's struct that ends
   * before them gets the defaults). Hitting one is an input error naming
   * the source and the limit; what was read before is still diagnosed. */
  uint64_t max_source_bytes;       /* bytes of log per source, after
                                      decompression; 0: no limit */
  uint64_t max_decompressed_bytes; /* bytes one .gz/.zst source may
                                      decompress to; 0: the default, 1 TiB */
  double time_budget_s;            /* wall clock for reading, from
                                      fl_session_new; 0: none. Negative, NaN
                                      or infinite: FL_ERR_INVALID_ARG */
  /* Retry policy (added within 0.3; a caller's struct that ends before it gets
   * the defaults): an incident's restart becomes a stop once the earlier
   * attempts of the job that ended within restart_window_s before it were
   * ended by the same rule max_restarts_per_rule times, or failed on its
   * host max_restarts_per_host times (a restart that drains the host is not
   * counted against it). The report's incidents[].action says so. */
  uint32_t max_restarts_per_rule;  /* 0: the default, 3 */
  uint32_t max_restarts_per_host;  /* 0: the default, 3 */
  double restart_window_s;         /* 0: the default, 86400 (24 h). Negative,
                                      NaN or infinite: FL_ERR_INVALID_ARG */
  /* How the job ended, when the caller knows (added within 0.3; a caller's
   * struct that ends before them gets the defaults: unknown). The logs
   * alone cannot tell a hang from a log posted cut. With no incident in the
   * logs, a stated failure gives the catalog reference the state names (an
   * OOM kill, the time limit, a node failure, a preemption), else the
   * fallback's, on the rank whose log stopped first; FL_JOB_RUNNING gives
   * the silent hang; completed with exit status 0 marks what the logs show
   * as survived. A cause the evidence backs is never overridden. The
   * report echoes both (input.job). */
  int32_t job_state;       /* FL_JOB_UNKNOWN (0) or an FL_JOB_* below;
                              anything else: FL_ERR_INVALID_ARG */
  int32_t job_exit_status; /* FL_EXIT_STATUS_UNSET: unknown; else 0-255, or
                              a negative signal number (-1 to -64);
                              anything else: FL_ERR_INVALID_ARG */
} fl_session_options;

/* fl_session_options.job_state: Slurm's job states (COMPLETED, FAILED,
 * TIMEOUT, CANCELLED, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, RUNNING). */
#define FL_JOB_UNKNOWN 0
#define FL_JOB_COMPLETED 1
#define FL_JOB_FAILED 2
#define FL_JOB_TIMEOUT 3
#define FL_JOB_CANCELLED 4
#define FL_JOB_OOM 5
#define FL_JOB_NODE_FAIL 6
#define FL_JOB_PREEMPTED 7
#define FL_JOB_RUNNING 8
#define FL_EXIT_STATUS_UNSET INT32_MIN

#define FL_SESSION_OPTIONS_INIT                                            \
  {                                                                        \
    sizeof(fl_session_options), 0, FL_TIME_UNSET, FL_TIME_UNSET, NULL, 0,  \
        NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, FL_JOB_UNKNOWN,    \
        FL_EXIT_STATUS_UNSET                                               \
  }

/* Sets the first `size` bytes of *opts to the defaults, with opts->size =
 * size; pass sizeof *opts. Writes nothing past `size`.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (opts is NULL, size is smaller than
 * the size and threads fields, or larger than this library's
 * fl_session_options: a struct from a newer header). @since 0.3 (0.1 took
 * no size and returned void) */
FL_API fl_status fl_session_options_init(fl_session_options *opts,
                                         size_t size);

/* Creates a session over a ruleset, which must outlive it. opts may be NULL
 * for the defaults.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL out or rs, an options size this
 * library does not know, a clock offset without a host, a time zone it
 * does not understand); FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_new(fl_session **out, const fl_ruleset *rs,
                                const fl_session_options *opts,
                                fl_error **err);
/* Frees a session; NULL is a no-op. @since 0.1 */
FL_API void fl_session_free(fl_session *s);
/* The last error's message on this session ("" if none); valid until the
 * next call on the session that does not return FL_ERR_BUSY. @since 0.1 */
FL_API const char *fl_session_last_error(const fl_session *s);

/* Adds a file, a directory (read recursively, each file one source, sorted),
 * a .gz or .zst file, or "-" for standard input. Sources are scanned by
 * fl_session_scan() or fl_session_finish(). A path that does not exist is
 * FL_ERR_NOT_FOUND here, with a message naming it (the report also lists it
 * among its input errors); one that exists but cannot be read is an input
 * error of the report only.
 * Returns: FL_OK; FL_ERR_NOT_FOUND; FL_ERR_INVALID_ARG (NULL or empty path,
 * a finished session); FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * @since 0.1 */
FL_API fl_status fl_session_add_path(fl_session *s, const char *path);

/* Adds bytes [begin, end) of a regular, uncompressed file, line-aligned at
 * both ends: a range starting inside a line skips to the next line start; one
 * ending inside a line runs to that line's end, so ranges cut at any offsets
 * partition the file's lines exactly. first_line is the 1-based number of the
 * line at `begin` when the caller knows it; 0 counts the newlines before
 * `begin` (one memchr-speed pass over the prefix). For scale-out: scan ranges
 * on many workers, export bundles, correlate them once.
 * Returns: FL_OK; FL_ERR_NOT_FOUND (the file does not exist);
 * FL_ERR_INVALID_ARG (NULL or empty path, end < begin, a finished session);
 * FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_add_range(fl_session *s, const char *path,
                                      uint64_t begin, uint64_t end,
                                      uint64_t first_line);

/* Opens a pushed stream named `name` (used as the evidence source).
 * Returns: FL_OK; FL_ERR_INVALID_ARG (a NULL argument, a finished session);
 * FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_stream_open(fl_session *s, const char *name,
                                        uint32_t *stream_id);
/* Pushes bytes of a stream. Chunk boundaries are arbitrary: a line split over
 * two chunks matches as one. Complete lines are scanned once about 1 MiB is
 * buffered, at fl_session_stream_flush() and at close. The caller's buffer is
 * not kept.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (an unknown or closed stream, NULL data
 * with len > 0, a finished session); FL_ERR_BUSY; FL_ERR_NOMEM;
 * FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_feed(fl_session *s, uint32_t stream_id,
                                 const void *data, size_t len);
/* Scans every complete line buffered on the stream now (on_evidence fires
 * for them) without closing it; a trailing partial line stays buffered.
 * Feeding batches lines for speed; call this when a live stream goes quiet.
 * Returns: as fl_session_feed. @since 0.1 */
FL_API fl_status fl_session_stream_flush(fl_session *s, uint32_t stream_id);

/* Ends a stream: its last line is scanned even without a final newline.
 * Returns: as fl_session_feed. @since 0.1 */
FL_API fl_status fl_session_stream_close(fl_session *s, uint32_t stream_id);

/* Scans every source added so far (using the session's threads). Sources that
 * cannot be read are recorded in the report's input.errors; the call still
 * returns FL_OK, with the first such error on fl_session_last_error(), unless
 * cancelled (FL_ERR_CANCELLED).
 * Returns: FL_OK; FL_ERR_CANCELLED; FL_ERR_IO (a range's file cannot be
 * read); FL_ERR_INVALID_ARG (a finished session); FL_ERR_BUSY;
 * FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_scan(fl_session *s);

/* Asks a running scan to stop soon (within the chunks already being
 * scanned). Any thread, any time, including while another call on the
 * session is in progress and from its callbacks. Cancellation is final for
 * the session: further scans, finish and export return FL_ERR_CANCELLED, as
 * does a finish during which the cancel arrives and a scan stopped by the
 * progress callback. @since 0.1 */
FL_API void fl_session_cancel(fl_session *s);

/* Number of sources that could not be read so far (as of the last call
 * that ended; 0 for NULL). @since 0.1 */
FL_API size_t fl_session_error_count(const fl_session *s);

typedef struct fl_report fl_report;

/* Scans what is left, closes open streams, correlates, and returns the
 * report. The session can take no more input afterwards. When paths or
 * ranges were added, no stream was opened, and not one of them yielded a
 * readable log (an empty directory, only unreadable files), there is nothing
 * to diagnose: FL_ERR_IO naming the paths, no report, and the session is
 * not finished.
 * Returns: FL_OK; FL_ERR_IO; FL_ERR_CANCELLED; FL_ERR_INVALID_ARG (a NULL
 * argument, a finished session); FL_ERR_BUSY; FL_ERR_NOMEM;
 * FL_ERR_INTERNAL. @since 0.1 */
FL_API fl_status fl_session_finish(fl_session *s, fl_report **out);

/* Correlates what the session has found so far into a report without
 * ending the session, for a caller that follows a live job (faultline
 * watch) and re-diagnoses it at a cadence. Paths and ranges added and not
 * yet scanned are scanned first (as fl_session_scan), then every complete
 * line buffered on an open stream (as fl_session_stream_flush); a trailing
 * partial line stays buffered. The session goes on taking input, and a
 * later snapshot or fl_session_finish sees everything. Line numbers and
 * offsets are those the final report would give. Costs a copy of the
 * evidence kept so far and a correlation: call it at a bounded cadence,
 * not per line.
 * Returns: FL_OK; FL_ERR_CANCELLED; FL_ERR_IO (a range's file cannot be
 * read); FL_ERR_INVALID_ARG (a NULL argument, a finished session);
 * FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.3 */
FL_API fl_status fl_session_snapshot(fl_session *s, fl_report **out);

/* Scans what is left and exports everything the session found as an
 * evidence bundle (FlatBuffers, verified when read back), instead of
 * correlating. *data is owned by the caller, freed with fl_free(). The
 * session can take no more input afterwards. Unlike a report, a bundle with
 * no readable log is not an error: its input errors travel in it.
 * Returns: FL_OK; FL_ERR_CANCELLED; FL_ERR_IO (a range's file cannot be
 * read); FL_ERR_INVALID_ARG; FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * @since 0.1 */
FL_API fl_status fl_session_export_bundle(fl_session *s, void **data,
                                          size_t *len);

/* Correlates any set of bundles (from sessions over the same ruleset, in
 * source order: ranges of one file in file order) into one report, as if one
 * session had scanned everything. opts gives the job window, clock offsets
 * and time zone (threads and callbacks are unused). A bundle that fails
 * verification is FL_ERR_PARSE naming its index.
 * Returns: FL_OK; FL_ERR_PARSE; FL_ERR_INVALID_ARG (a NULL argument or
 * bundle, options as fl_session_new); FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * @since 0.1 */
FL_API fl_status fl_report_from_bundles(fl_report **out, const fl_ruleset *rs,
                                        const fl_session_options *opts,
                                        const void *const *bundles,
                                        const size_t *lens, size_t count,
                                        fl_error **err);

/* Bounds on a session's history of prior attempts: how many bundles
 * fl_session_add_prior_bundle takes, and the largest one. @since 0.3 */
#define FL_MAX_PRIOR_BUNDLES 16
#define FL_MAX_PRIOR_BUNDLE_BYTES (64u << 20) /* 64 MiB */

/* Gives the session the evidence bundle of an earlier attempt of the same
 * job (fl_session_export_bundle of that attempt's session, same ruleset),
 * so that a caller keeps a job's history without re-reading old logs. Call
 * it once per attempt, oldest first, before fl_session_finish or
 * fl_session_snapshot. Each bundle is one attempt of the report's attempts
 * (recognised "bundle", labelled "prior bundle K"), listed before the
 * session's own; its sources are named "<prior bundle K>/NAME" and its input
 * errors are not the session's. Recurrence across the attempts (the same
 * failure again, on the same host, at the same step, a resume failing on
 * the checkpoint the previous attempt saved) is evidence in the report.
 * The bundle is read and verified during the call and never kept.
 * Returns: FL_OK; FL_ERR_PARSE (not a bundle of this ruleset, named "prior
 * bundle K"); FL_ERR_INVALID_ARG (a NULL argument, a finished session, more
 * than FL_MAX_PRIOR_BUNDLES bundles, one over FL_MAX_PRIOR_BUNDLE_BYTES);
 * FL_ERR_BUSY; FL_ERR_NOMEM; FL_ERR_INTERNAL. @since 0.3 */
FL_API fl_status fl_session_add_prior_bundle(fl_session *s, const void *data,
                                             size_t len);

/* ---- Reports ------------------------------------------------------------- */

/* Frees a report; NULL is a no-op. @since 0.1 */
FL_API void fl_report_free(fl_report *r);

/* The report as JSON (schema/report.schema.json), NUL-terminated,
 * borrowed until fl_report_free(). len may be NULL.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL r or json). @since 0.1 */
FL_API fl_status fl_report_json(const fl_report *r, const char **json,
                                size_t *len);
/* The human-readable report, borrowed until fl_report_free().
 * Returns: FL_OK; FL_ERR_INVALID_ARG. @since 0.1 */
FL_API fl_status fl_report_text(const fl_report *r, const char **text,
                                size_t *len);
/* Every evidence record kept, as JSON lines in source then offset order,
 * borrowed until fl_report_free(). Built on the first call.
 * Returns: FL_OK; FL_ERR_INVALID_ARG; FL_ERR_NOMEM. @since 0.1 */
FL_API fl_status fl_report_evidence_jsonl(const fl_report *r,
                                          const char **jsonl, size_t *len);

/* The report as one self-contained HTML page (UTF-8, NUL-terminated): the
 * primary incident with its initiating evidence, fix and verify, collateral
 * clusters, ignored lines and why, missing facts, input errors, clock
 * offsets, and a timeline of ranks by time (one row per host past 80 rows).
 * Inline CSS and SVG and a few lines of inline script (the timeline's zoom);
 * its Content-Security-Policy lets the page load nothing from the network.
 * Every log-derived string is HTML-escaped. The same report gives the same
 * bytes (no generation time in it). Borrowed until fl_report_free(); built
 * on the first call.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL r or html); FL_ERR_NOMEM.
 * @since 0.3 */
FL_API fl_status fl_report_html(const fl_report *r, const char **html,
                                size_t *len);

/* Matches per signal as a JSON object {"rule/signal": count}, for bench and
 * rule tuning, borrowed until fl_report_free().
 * Returns: FL_OK; FL_ERR_INVALID_ARG. @since 0.1 */
FL_API fl_status fl_report_signal_hits_json(const fl_report *r,
                                            const char **json, size_t *len);

/* Input totals. Set out->size = sizeof *out first.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, or out->size too small).
 * @since 0.1 */
typedef struct fl_report_totals {
  uint32_t size; /* sizeof(fl_report_totals) */
  uint64_t sources;
  uint64_t bytes;
  uint64_t lines;
  double seconds;
  uint64_t evidence;  /* records kept */
  uint64_t matches;   /* matches seen, including those past the caps */
  uint64_t incidents;
  uint64_t errors;    /* sources that could not be read */
  /* Added in 0.3: what the counts cover (the report's input.caps). Per-rank
   * and per-host breakdowns are kept for the first 65,536 ranks and 16,384
   * hosts met; past them, the distinct count is an estimate. */
  uint64_t ranks_seen; /* distinct ranks (estimated when FL_CAPPED_RANKS) */
  uint64_t ranks_kept; /* ranks with per-rank breakdowns */
  uint64_t hosts_seen; /* distinct hosts (estimated when FL_CAPPED_HOSTS) */
  uint64_t hosts_kept;
  uint32_t capped;     /* FL_CAPPED_* bits: what was capped */
} fl_report_totals;
#define FL_CAPPED_EVIDENCE 1u /* evidence < matches: records dropped, counted */
#define FL_CAPPED_RANKS 2u    /* more ranks than ranks_kept */
#define FL_CAPPED_HOSTS 4u    /* more hosts than hosts_kept */
#define FL_CAPPED_TOPOLOGY 8u /* device/pid links or clock sync points */
#define FL_CAPPED_METRICS 16u /* metric series */
FL_API fl_status fl_report_totals_get(const fl_report *r,
                                      fl_report_totals *out);

/* One incident. Strings borrowed until fl_report_free(). */
typedef struct fl_incident_view {
  const char *rule;
  const char *reference;
  const char *title;
  const char *category;
  double confidence;
  int64_t rank;     /* initiating rank, -1 when unknown */
  const char *host; /* NULL when unknown */
  const char *gpu;  /* NULL when unknown */
  int64_t time_us;  /* FL_TIME_UNSET when unknown */
  int inferred;     /* 1 when the suspect was inferred, not seen */
  const char *fix;
  const char *verify;
  const char *explanation;
  size_t initiating_evidence; /* count, see fl_report_incident_evidence */
  size_t collateral;          /* number of collateral clusters */
  size_t missing_facts;
} fl_incident_view;

/* Number of incidents; the first is the primary diagnosis. @since 0.1 */
FL_API size_t fl_report_incident_count(const fl_report *r);
/* Fills *out with incident i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, or i out of range). @since 0.1 */
FL_API fl_status fl_report_incident(const fl_report *r, size_t i,
                                    fl_incident_view *out);
/* Missing fact j of incident i, borrowed until fl_report_free(); NULL when
 * out of range. @since 0.1 */
FL_API const char *fl_report_incident_missing_fact(const fl_report *r,
                                                   size_t i, size_t j);
/* Copies up to cap initiating evidence records of incident i, starting at
 * `first`, into out; *n receives how many.
 * Returns: FL_OK; FL_DONE (none left from `first`); FL_ERR_INVALID_ARG (NULL
 * r or n, NULL out with cap > 0, i out of range). @since 0.1 */
FL_API fl_status fl_report_incident_evidence(const fl_report *r, size_t i,
                                             size_t first,
                                             fl_evidence_view *out, size_t cap,
                                             size_t *n);

/* Number of evidence records kept. @since 0.1 */
FL_API size_t fl_report_evidence_count(const fl_report *r);
/* Copies up to cap evidence records starting at `first` into out (source then
 * offset order); *n receives how many.
 * Returns: FL_OK; FL_DONE; FL_ERR_INVALID_ARG. @since 0.1 */
FL_API fl_status fl_report_evidence(const fl_report *r, size_t first,
                                    fl_evidence_view *out, size_t cap,
                                    size_t *n);

/* One input that could not be read (the report's input.errors). Strings
 * borrowed until fl_report_free(). Size-versioned: set size first. */
typedef struct fl_input_error_view {
  uint32_t size;       /* sizeof(fl_input_error_view) */
  const char *source;  /* the path as given, or the file inside a directory */
  const char *message; /* names the source and says why */
  fl_status status;    /* FL_ERR_IO, ... */
} fl_input_error_view;

/* Number of inputs that could not be read. @since 0.3 */
FL_API size_t fl_report_input_error_count(const fl_report *r);
/* Fills *out with input error i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_input_error(const fl_report *r, size_t i,
                                       fl_input_error_view *out);

/* Files passed over on purpose, not errors (the report's input.warnings):
 * devices, FIFOs and sockets found while walking a directory, symlink
 * loops. Their status is FL_OK. @since 0.3 */
FL_API size_t fl_report_input_warning_count(const fl_report *r);
/* Fills *out with input warning i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_input_warning(const fl_report *r, size_t i,
                                         fl_input_error_view *out);

/* A collateral cluster of an incident: the failures that followed from it
 * (the report's incidents[i].collateral[k]). Pointers borrowed until
 * fl_report_free(). Size-versioned: set size first. */
typedef struct fl_collateral_view {
  uint32_t size;            /* sizeof(fl_collateral_view) */
  const char *rule;
  const char *reference;
  uint64_t count;           /* matches in the cluster */
  const int64_t *ranks;     /* rank_count ranks, ascending */
  size_t rank_count;
  const char *const *hosts; /* host_count host names */
  size_t host_count;
  int64_t first_time_us;    /* FL_TIME_UNSET when unknown */
  int64_t last_time_us;
  fl_evidence_view sample;  /* one representative record */
} fl_collateral_view;

/* Fills *out with collateral cluster k of incident i (k below the
 * incident's fl_incident_view.collateral).
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i or k out of range, out->size
 * too small). @since 0.3 */
FL_API fl_status fl_report_incident_collateral(const fl_report *r, size_t i,
                                               size_t k,
                                               fl_collateral_view *out);

/* Evidence the correlator set aside, with why (the report's ignored[]):
 * hardware lines before the job window, for example. Pointers borrowed
 * until fl_report_free(). Size-versioned: set size first. */
typedef struct fl_ignored_view {
  uint32_t size;           /* sizeof(fl_ignored_view) */
  const char *rule;
  const char *reason;
  uint64_t count;
  fl_evidence_view sample;
} fl_ignored_view;

/* Number of ignored groups. @since 0.3 */
FL_API size_t fl_report_ignored_count(const fl_report *r);
/* Fills *out with ignored group i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_ignored(const fl_report *r, size_t i,
                                   fl_ignored_view *out);

/* The stable id of incident i (the report's incidents[i].id, "inc-" and 12
 * hex digits): the same in every re-diagnosis of the same logs as they
 * grow. Borrowed until fl_report_free(); NULL when out of range.
 * @since 0.3 */
FL_API const char *fl_report_incident_id(const fl_report *r, size_t i);

#define FL_INCIDENT_ID_SIZE 20 /* bytes of an id with its NUL, rounded up */

/* The id fl_report_incident_id gives an incident whose first initiating
 * line is line `line` of `source` (host and rank ignored), or, with source
 * NULL, an inferred incident with no line of its own, by its suspect (host
 * NULL when unknown, rank -1). For a caller that numbers a stream's lines
 * across sessions itself (faultline watch). `reference` is the incident's
 * reference title. Writes the NUL-terminated id to out.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL reference or out). @since 0.3 */
FL_API fl_status fl_incident_id(const char *reference, const char *source,
                                uint64_t line, const char *host, int64_t rank,
                                char *out /* FL_INCIDENT_ID_SIZE bytes */);

/* What a platform should do about an incident (the report's
 * incidents[i].action). Pointers borrowed until fl_report_free().
 * Size-versioned: set size first. */
typedef struct fl_action_view {
  uint32_t size;                    /* sizeof(fl_action_view) */
  const char *kind;                 /* "restart", "restart_excluding", "stop",
                                       "unknown" */
  const char *const *exclude_hosts; /* exclude_host_count hosts to drain */
  size_t exclude_host_count;
  const char *const *exclude_gpus;  /* exclude_gpu_count GPUs to drain: PCI
                                       bus ids, or host:index */
  size_t exclude_gpu_count;
  const char *reason;               /* one sentence with the facts */
  const char *set_by;               /* the rule id, "recurrence",
                                       "retry-policy" */
  const char *missing_fact;         /* kind "unknown": what would settle it;
                                       NULL otherwise */
} fl_action_view;

/* Fills *out with the action of incident i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_incident_action(const fl_report *r, size_t i,
                                           fl_action_view *out);

/* The job window the diagnosis used (given in the options or derived from
 * the logs); FL_TIME_UNSET for an end that is unknown.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (a NULL argument). @since 0.3 */
FL_API fl_status fl_report_job_window(const fl_report *r, int64_t *start_us,
                                      int64_t *end_us);

/* ---- Attempts ------------------------------------------------------------ */

/* One attempt of the job (the report's attempts[i]): the input held several
 * runs of it (restart directories, a launcher's restarts, a scheduler's
 * requeues, prior bundles). Strings borrowed until fl_report_free().
 * Size-versioned: set size first. @since 0.3 */
typedef struct fl_attempt_view {
  uint32_t size;          /* sizeof(fl_attempt_view) */
  uint32_t index;         /* 0-based, oldest first */
  const char *label;      /* "attempt_2", "restart 1", "requeue 1", ... */
  const char *recognised; /* "directory", "elastic-restart", "slurm-requeue",
                             "bundle", "session" */
  int64_t start_us;       /* FL_TIME_UNSET when unknown */
  int64_t end_us;
  const char *primary_rule; /* its primary incident's rule; NULL when none */
  const char *host;         /* of that incident; NULL when unknown */
  int64_t rank;             /* -1 when unknown */
  int64_t step;             /* training step reached, -1 when unknown */
} fl_attempt_view;

/* Number of attempts: 0 when the job ran once. @since 0.3 */
FL_API size_t fl_report_attempt_count(const fl_report *r);
/* Fills *out with attempt i.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_attempt(const fl_report *r, size_t i,
                                   fl_attempt_view *out);

/* Where incident i sits in the job's history (the report's incidents[i]
 * step, attempt and recurrence). Pointers borrowed until fl_report_free().
 * Size-versioned: set size first. @since 0.3 */
typedef struct fl_incident_history {
  uint32_t size;     /* sizeof(fl_incident_history) */
  int64_t step;      /* training step the failing rank reached, -1 unknown */
  uint32_t attempt;  /* index of its attempt (0 when the job ran once) */
  /* Earlier attempts that failed with the same rule, and of those how many
   * on this incident's host and at its step. */
  const uint32_t *recurrence_attempts;
  size_t recurrence_attempt_count;
  uint32_t same_host;
  uint32_t same_step;
  int resume_failed_on_previous_checkpoint; /* 1: fails on the checkpoint
                                               the previous attempt saved */
} fl_incident_history;

/* Fills *out with incident i's history.
 * Returns: FL_OK; FL_ERR_INVALID_ARG (NULL, i out of range, out->size too
 * small). @since 0.3 */
FL_API fl_status fl_report_incident_history(const fl_report *r, size_t i,
                                            fl_incident_history *out);

/* ---- Experimental (fl_x_*) ---------------------------------------------- */

/* Not part of the frozen ABI: these may change or go in any release (see
 * "ABI and versions" above). They serve faultline's own bench and
 * rule-tuning tools. */

/* What each signal adds to a scan, measured on a sample of the inputs: up
 * to sample_bytes from the start of the files `paths` stand for (shared in
 * proportion to their sizes, cut after a newline; directories recursively,
 * .gz/.zst decompressed, "-" skipped). A JSON object:
 *   {"sample_bytes": N, "full_s_per_gb": x, "skipped": ["why", ...],
 *    "signals": [{"signal": "rule/signal", "role": "initiating",
 *                 "alone_s_per_gb": x, "lines": n, "confirm_us_per_line": y}, ...]}
 * with every signal, costliest first: its pattern alone in Hyperscan over the
 * sample (CPU seconds per GB, best of 3), the sample lines it matches, and
 * RE2's confirm + extract time per matched line. Takes seconds (one
 * Hyperscan compile and three scans of the sample per signal). *json is
 * NUL-terminated, owned by the caller, freed with fl_free().
 * Returns: FL_OK; FL_ERR_INVALID_ARG (no input gives a byte, or a NULL
 * argument); FL_ERR_NOMEM; FL_ERR_INTERNAL.
 * Experimental (bench --costs): @since 0.2 as fl_ruleset_signal_costs_json,
 * renamed in 0.3. */
FL_API fl_status fl_x_ruleset_signal_costs_json(const fl_ruleset *rs,
                                                const char *const *paths,
                                                size_t npaths,
                                                uint64_t sample_bytes,
                                                char **json, size_t *len,
                                                fl_error **err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FAULTLINE_FAULTLINE_H_ */
