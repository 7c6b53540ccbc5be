package faultline_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	faultline "github.com/faultline/faultline/bindings/go"
)

const (
	xidLine      = "Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
	watchdogLine = "[rank%d]:[E1102 03:42:10.123456 1234 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800085 milliseconds before timing out.\n"
)

// noiseLine is the i-th line of healthy training chatter for rank.
func noiseLine(rank, i int) string {
	switch i % 4 {
	case 0:
		return fmt.Sprintf("[rank%d]:[I1102 03:%02d:%02d.%06d 1234 train.py:412] step %d loss %.4f lr 3.0e-04 grad_norm %.3f tokens/s 41234\n",
			rank, 10+(i/60)%30, i%60, (i*7919)%1000000, i, 2.5-float64(i%1000)/2000, 0.8+float64(i%17)/40)
	case 1:
		return fmt.Sprintf("node018:24517:24533 [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n", rank%8, i%32, rank, rank%8, (rank+1)%8, (rank+1)%8)
	case 2:
		return fmt.Sprintf("2026-11-02 03:%02d:%02d,%03d - train - INFO - iteration %d/100000 | consumed samples %d | elapsed time per iteration (ms): 812.4\n",
			10+(i/60)%30, i%60, i%1000, i, i*1024)
	default:
		return fmt.Sprintf("[rank%d]:[W1102 03:%02d:%02d.%06d 1234 ProcessGroupNCCL.cpp:1856] Warning: TORCH_NCCL_ASYNC_ERROR_HANDLING is deprecated\n",
			rank, 10+(i/60)%30, i%60, i%1000000)
	}
}

// writeIncident writes the 2-host incident under dir: node017 loses its GPU
// (Xid 79) at 03:12:05 and the node018 ranks time out half an hour later.
// noise lines of healthy chatter precede each rank's timeout.
func writeIncident(t testing.TB, dir string, ranks, noise int) {
	t.Helper()
	write := func(rel string, fill func(w io.Writer)) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fill(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("node017/dmesg.log", func(w io.Writer) {
		io.WriteString(w, "Nov  2 03:00:00 node017 kernel: [999236.100000] nvidia-nvlink: Nvlink Core is being initialized\n")
		io.WriteString(w, xidLine)
	})
	for k := 0; k < ranks; k++ {
		write(fmt.Sprintf("node018/rank-%d.log", k), func(w io.Writer) {
			for i := 0; i < noise; i++ {
				io.WriteString(w, noiseLine(k, i))
			}
			fmt.Fprintf(w, watchdogLine, k, k)
		})
	}
}

func newEngine(t testing.TB) *faultline.Engine {
	t.Helper()
	e, err := faultline.Default()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// bigFile is a ~200 MB log shared by the cancellation tests and benchmarks,
// generated once per test binary run.
var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
	bigDir  string
)

const bigSize = 200 << 20

func bigLog(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a 200 MB file; skipped with -short")
	}
	bigOnce.Do(func() {
		if p := os.Getenv("FAULTLINE_BIG_LOG"); p != "" {
			bigPath = p
			return
		}
		bigDir, bigErr = os.MkdirTemp("", "faultline-go-big-")
		if bigErr != nil {
			return
		}
		bigPath = filepath.Join(bigDir, "node018", "rank-0.log")
		if bigErr = os.MkdirAll(filepath.Dir(bigPath), 0o755); bigErr != nil {
			return
		}
		f, err := os.Create(bigPath)
		if err != nil {
			bigErr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		n := 0
		for i := 0; n < bigSize; i++ {
			l := noiseLine(0, i)
			n += len(l)
			w.WriteString(l)
			if i%500000 == 250000 {
				fmt.Fprintf(w, watchdogLine, 0, 0)
			}
		}
		if bigErr = w.Flush(); bigErr == nil {
			bigErr = f.Close()
		}
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return bigPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}
