// Go runtime with cgo: C code called from 4 goroutines (each locked to its
// own OS thread) mallocs blocks; Go's own heap is not malloc. Goroutine k
// (0..3) calls c_alloc_blocks for 100 * (k + 1) blocks of 56 bytes, 1000 in
// all, then c_free_blocks frees the first half of each: 500 live at exit.
// Prints each goroutine's block count and checksum; exit status 4, by
// os.Exit (the exit_group system call: Go's runtime does not call libc's
// exit), or with the argument "libc-exit" by libc's exit called through cgo.
package main

/*
#include <stdlib.h>
#include <string.h>

static void *blocks[4][400];

__attribute__((noinline)) void *c_alloc_block(int k, int i)
{
    char *p = malloc(56);
    memset(p, k + i, 56);
    return p;
}

// Fills blocks[k][0..n) and returns the sum of their first bytes.
long c_alloc_blocks(int k, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) {
        blocks[k][i] = c_alloc_block(k, i);
        sum += ((unsigned char *)blocks[k][i])[0];
    }
    return sum;
}

void c_free_blocks(int k, int n)
{
    for (int i = 0; i < n; i++) free(blocks[k][i]);
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

func main() {
	sums := make([]int64, 4)
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			runtime.LockOSThread()
			n := 100 * (k + 1)
			sums[k] = int64(C.c_alloc_blocks(C.int(k), C.int(n)))
			C.c_free_blocks(C.int(k), C.int(n/2))
		}(k)
	}
	wg.Wait()
	for k := 0; k < 4; k++ {
		fmt.Printf("goroutine %d: %d blocks, sum %d\n", k, 100*(k+1), sums[k])
	}
	if len(os.Args) > 1 && os.Args[1] == "libc-exit" {
		C.exit(4)
	}
	os.Exit(4)
}
