// Command relay is the benchmark's baseline of one process hop: it starts a
// server and copies lines from its own stdin to the server's stdin, and from
// the server's stdout to its own stdout, flushing after every line.
//
//	relay -- CMD ARGS...
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// copyLines copies r to w line by line, flushing each line; it closes w at EOF.
func copyLines(w io.WriteCloser, r io.Reader, done chan<- struct{}) {
	defer close(done)
	defer w.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			bw.Write(line) // a long line: keep copying until its end
			continue
		}
		bw.Write(line)
		if bw.Flush() != nil || err != nil {
			return
		}
	}
}

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: relay -- CMD ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	in, err1 := cmd.StdinPipe()
	out, err2 := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil || err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "relay:", err, err1, err2)
		os.Exit(4)
	}
	toServer, toClient := make(chan struct{}), make(chan struct{})
	go copyLines(in, os.Stdin, toServer)
	go copyLines(os.Stdout, out, toClient)
	<-toClient // the server closed its stdout
	if err := cmd.Wait(); err != nil {
		os.Exit(3)
	}
}
