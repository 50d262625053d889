// Dataset writes the stack workload as a multi-file OME-TIFF dataset, one
// file per process: one static binary, a plan, and an index per process.
//
// The stack workload is 84 series of 90 focal planes x 2 channels of
// 128 x 128 uint16 pixels, 15,120 planes, the planes of examples/stack
// (each process makes the same synthetic planes). Its plan, a small JSON
// file, says which planes go in which file, and from it every process
// derives the same file names, the same UUIDs and the same OME-XML: each
// file holds the OME-XML of the whole dataset, whose TiffData name the file
// of every plane, so that Bio-Formats, OMERO and tifffile open the whole
// set from any one file. With -companion the metadata goes once into
// NAME.companion.ome instead, and each TIFF points to it. The processes
// need nothing but the plan: no lock, no shared state and no step after
// the last; each file appears whole when its process succeeds, and never
// in part (a process killed leaves no file).
//
// Usage:
//
//	dataset plan [flags]                   write the plan of the stack workload
//	dataset write [flags] PLAN [INDEX]     write file INDEX of the plan
//	dataset check PLAN DIR                 check the files of the plan in DIR
//	dataset check FILE                     check a dataset from one of its files
//	dataset compare [flags]                time one process against several
//
// plan's flags:
//
//	-o path          the plan's file, its directory made (default plan.json)
//	-name name       names the files: NAME_0.ome.tif... (default stack)
//	-files n         files, of equal plane counts (default 8)
//	-by-image        keep each series in one file (-files 0: one file per series)
//	-companion       the metadata in NAME.companion.ome, not in every file
//	-seed text       told apart from other datasets of the same plan (hashed into the UUIDs)
//	-series n, -z n, -channels n, -size n   the stack (default 84, 90, 2, 128)
//	-compression c   lzw, none, deflate or zstd (default lzw)
//	-level n         deflate or zstd level, 0 for the codec's default
//
// write's flags:
//
//	-dir path        where the file goes (default the plan's directory)
//	-workers n       encoding goroutines, 0 for one per CPU (default 1)
//	-replace         replace a file a previous run left
//	-nosync          skip the fsync at the end
//
// INDEX defaults to $SLURM_ARRAY_TASK_ID, then $JOB_COMPLETION_INDEX, so
// that the same command line runs as a Slurm array task or a Kubernetes
// indexed Job's pod. write prints one line: the file, its planes, its size
// and the time it took. check prints a line per file and "complete", or a
// line per problem, naming the file, and exits with 1.
//
// # Running it
//
// Locally, xargs runs the processes (make dataset does this):
//
//	CGO_ENABLED=0 go build -o dataset ./examples/dataset
//	./dataset plan -files 8 -o /data/stack/plan.json
//	seq 0 7 | xargs -P 8 -I{} ./dataset write /data/stack/plan.json {}
//	./dataset check /data/stack/plan.json /data/stack
//
// As a Slurm array, on a shared file system, with the binary and the plan
// there:
//
//	sbatch --array=0-7 --cpus-per-task=1 --wrap='./dataset write -replace /data/stack/plan.json "$SLURM_ARRAY_TASK_ID"'
//
// As a Kubernetes indexed Job, the static binary in any image, the plan and
// the output on a shared volume:
//
//	apiVersion: batch/v1
//	kind: Job
//	metadata: {name: stack}
//	spec:
//	  completions: 8
//	  parallelism: 8
//	  completionMode: Indexed
//	  template:
//	    spec:
//	      restartPolicy: Never
//	      containers:
//	      - name: write
//	        image: example.org/ometiff-dataset
//	        command: ["/dataset", "write", "/data/stack/plan.json"]  # INDEX from $JOB_COMPLETION_INDEX
//	        volumeMounts: [{name: data, mountPath: /data}]
//	      volumes: [{name: data, persistentVolumeClaim: {claimName: stack}}]
//
// A task that fails or is killed leaves no file, and the others' files are
// whole: check names what is missing, and running the same index again
// (with -replace if it may have finished) completes the set with the same
// bytes. Slurm and Kubernetes stop a task with SIGTERM at its time limit:
// the file is discarded and the process exits with 143.
//
// compare times the stack workload written by one process with -workers 2
// into one file, against the same planes written as -files files by
// processes run -jobs at a time with -workers 1 each (by default 8 files,
// 2 at a time: as many cores as the single process), in alternating runs,
// and prints the medians of the wall times and of the processes' CPU
// times, and the throughput ratio. Its flags: -runs n (default 5), -files
// n, -jobs n, -compression c, -series n, -dir path, -nosync.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is what dataset prints for -h or without a command.
const usage = `usage: dataset COMMAND [flags] [arguments]

Dataset writes the stack workload as a multi-file OME-TIFF, a file per
process, from a plan every process reads. The commands are:

  plan [flags]                 write the plan of the stack workload
  write [flags] PLAN [INDEX]   write file INDEX of the plan (default
                               $SLURM_ARRAY_TASK_ID, $JOB_COMPLETION_INDEX)
  check PLAN DIR | check FILE  check a written dataset
  compare [flags]              time one process against several

Run dataset COMMAND -h for a command's flags.
`

// run is the program: it runs the command args name and returns the exit
// code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.Exit("dataset", stderr, cli.UsageError{Err: fmt.Errorf("no command")})
	}
	commands := map[string]func([]string, io.Writer, io.Writer) int{
		"plan": runPlan, "write": runWrite, "check": runCheck, "compare": runCompare,
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	command, ok := commands[args[0]]
	if !ok {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: fmt.Errorf("unknown command %q (want plan, write, check or compare)", args[0])})
	}
	return command(args[1:], stdout, stderr)
}
