package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
)

// minClaimTTL is the shortest --claim-ttl: the heartbeat renews the
// claim every third of it, a write to the database each time.
const minClaimTTL = time.Millisecond

// claimFlags are append's writer-claim flags.
type claimFlags struct {
	holder  string
	ttl     time.Duration
	release bool
}

func (f *claimFlags) add(cmd *cobra.Command) {
	cmd.Flags().Var((*nonEmpty)(&f.holder), "claim", "write under a writer claim of this holder name: refused while another holder's claim is live")
	cmd.Flags().DurationVar(&f.ttl, "claim-ttl", sessiontree.DefaultClaimTTL, "how long the claim lives after the last write or heartbeat")
	cmd.Flags().BoolVar(&f.release, "release", false, "release the claim once the input ends (default: keep it until it expires)")
}

// claim returns st to write through: st itself without --claim, else a
// claim on it, which a heartbeat keeps alive while the command waits for
// input. Call end when the writes are done: it stops the heartbeat and,
// with --release, releases the claim.
func (f *claimFlags) claim(ctx context.Context, st sessiontree.Storage) (sessiontree.Storage, func(error) error, error) {
	if f.holder == "" {
		if f.release || f.ttl != sessiontree.DefaultClaimTTL {
			return nil, nil, usagef("--release and --claim-ttl need --claim")
		}
		return st, func(err error) error { return err }, nil
	}
	if f.ttl < minClaimTTL {
		return nil, nil, usagef("--claim-ttl must be at least %s (a heartbeat renews the claim every third of it), got %s", minClaimTTL, f.ttl)
	}
	cl, ok := st.(sessiontree.Claimer)
	if !ok {
		return nil, nil, fmt.Errorf("--claim: this storage does not support writer claims")
	}
	c, err := cl.Claim(ctx, f.holder, f.ttl)
	if err != nil {
		return nil, nil, err
	}
	hctx, stop := context.WithCancel(ctx)
	beat := make(chan error, 1)
	// A lost claim also fails the next write, which says so.
	go func() { beat <- sessiontree.Heartbeat(hctx, c, f.ttl/3) }()
	end := func(err error) error {
		stop()
		<-beat
		if err == nil && f.release {
			err = c.Release(ctx)
		}
		return err
	}
	return c, end, nil
}
