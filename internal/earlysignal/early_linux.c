//go:build linux && cgo && (386 || amd64 || arm64 || loong64 || ppc64le)

// The C half of package earlysignal: it catches SIGHUP, SIGINT and SIGTERM
// from before the Go runtime starts until the package's init has asked
// os/signal for them, and hands over then (see early_cgo.go).
//
// Three moments:
//  1. catch_early, a constructor, runs before the Go runtime (glibc calls
//     the program's constructors, with argc and argv, before main, and
//     main is where the runtime starts). For rpctap run and replay it
//     installs record for each of the three signals that was not
//     inherited as ignored, and starts holding.
//  2. While holding, the actions the Go runtime asks for these signals
//     (with cgo it asks through the C library's sigaction, which this
//     file interposes) are kept aside, not installed: the runtime
//     installs its handler for every signal in its first steps, long
//     before any package is initialised, and that handler ends the
//     process on a signal nobody has asked os/signal for yet. The
//     runtime sees the action it asked for when it asks again.
//  3. earlysignal_hand_over, called once os/signal has been asked for the
//     signals, installs the runtime's actions kept aside and raises again
//     each signal that record saw, so that it reaches os/signal.
//
// Only with glibc, which passes constructors argc and argv and exports
// its sigaction as __sigaction too, and on the architectures where the Go
// runtime asks the C library's sigaction (runtime/cgo_sigaction.go names
// them); elsewhere nothing here runs (the Go runtime's handlers, then
// package earlysignal's init, are the first to catch the signals).

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#ifdef __GLIBC__

// __sigaction is the C library's sigaction under its other exported name,
// for the interposed sigaction below to call.
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

enum { nsigs = 3 };

static const int sigs[nsigs] = {SIGHUP, SIGINT, SIGTERM};

// holding is 1 from catch_early until the hand-over.
static atomic_int holding;

// caught[i] is 1 while record is the handler of sigs[i], installed by
// catch_early: not for a signal inherited as ignored.
static int caught[nsigs];

// before[i] is sigs[i]'s action before catch_early, runtime[i] the one
// the Go runtime asked for since (when asked[i] is 1).
static struct sigaction before[nsigs], runtime[nsigs];
static int asked[nsigs];

// arrived[i] is 1 when record has seen sigs[i] and nobody has raised it
// again yet.
static atomic_int arrived[nsigs];

// handedOver is 1 once the hand-over has installed the runtime's actions.
static atomic_int handedOver;

static int indexOf(int sig) {
	for (int i = 0; i < nsigs; i++) {
		if (sigs[i] == sig) {
			return i;
		}
	}
	return -1;
}

// record is the handler from catch_early to the hand-over. It only notes
// that the signal came; should the hand-over have read the notes already
// (the signal came on another thread while it ran), it raises the signal
// again itself, for the runtime's handler, installed by then.
static void record(int sig) {
	int i = indexOf(sig);
	if (i < 0) {
		return;
	}
	atomic_store(&arrived[i], 1);
	if (atomic_load(&handedOver) && atomic_exchange(&arrived[i], 0)) {
		int e = errno;
		kill(getpid(), sig);
		errno = e;
	}
}

// catch_early runs before the Go runtime, in the main thread, alone.
__attribute__((constructor)) static void catch_early(int argc, char **argv, char **envp) {
	(void)envp;
	if (argc < 2 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "replay") != 0)) {
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = record;
	sigfillset(&sa.sa_mask);
	// On the signal stack the Go runtime gives each of its threads: a
	// goroutine's own stack is too small for a signal frame.
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	for (int i = 0; i < nsigs; i++) {
		if (__sigaction(sigs[i], NULL, &before[i]) != 0) {
			continue;
		}
		// A signal inherited as ignored (nohup) stays so: the runtime
		// leaves it alone too, until os/signal is asked for it.
		if (!(before[i].sa_flags & SA_SIGINFO) && before[i].sa_handler == SIG_IGN) {
			continue;
		}
		if (__sigaction(sigs[i], &sa, NULL) == 0) {
			caught[i] = 1;
		}
	}
	atomic_store(&holding, 1);
}

// sigaction is the C library's, except for the signals record catches
// while holding: then the actions asked for are kept aside, to be
// installed by the hand-over, and asking for the action tells the one
// kept aside (or, before any was asked for, the action before
// catch_early, as if record were not there). The Go runtime sets its
// handlers up in one thread, before it starts another.
int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
	int i = indexOf(sig);
	if (i < 0 || !caught[i] || !atomic_load(&holding)) {
		return __sigaction(sig, act, old);
	}
	if (old != NULL) {
		*old = asked[i] ? runtime[i] : before[i];
	}
	if (act != NULL) {
		runtime[i] = *act;
		asked[i] = 1;
	}
	return 0;
}

// earlysignal_hand_over installs the runtime's actions kept aside and
// raises again each signal that came since catch_early.
void earlysignal_hand_over(void) {
	if (!atomic_load(&holding)) {
		return;
	}
	for (int i = 0; i < nsigs; i++) {
		if (!caught[i]) {
			continue;
		}
		if (asked[i]) {
			__sigaction(sigs[i], &runtime[i], NULL);
			continue;
		}
		// The runtime asked for nothing through sigaction: should it have
		// installed its handler by a system call of its own, that one
		// stays; only record gives way to the action from before.
		struct sigaction now;
		if (__sigaction(sigs[i], NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == record) {
			__sigaction(sigs[i], &before[i], NULL);
		}
	}
	atomic_store(&holding, 0);
	// From here a signal reaches the runtime's handler. One that record
	// saw is raised again: by this loop, or by record itself when it
	// noted the signal after this loop read its note (both atomics are
	// sequentially consistent, so one of the two sees the other).
	atomic_store(&handedOver, 1);
	for (int i = 0; i < nsigs; i++) {
		if (caught[i] && atomic_exchange(&arrived[i], 0)) {
			kill(getpid(), sigs[i]);
		}
	}
}

#else

void earlysignal_hand_over(void) {}

#endif
