/* signatures.h - saturn-profile's signature pass: run the batch script in
 * SATURN_MODE=signature for each array task id and group the ids by the
 * signature saturn-run reports (what changes speed: model, batch size,
 * command; not the learning rate).
 */
#ifndef SATURN_PROFILER_SIGNATURES_H
#define SATURN_PROFILER_SIGNATURES_H

#include "probe.h"

struct tsweep; /* sweeps.h: the sweeps of one technique */

/* One distinct signature of the batch. */
struct sig {
	char *signature;
	double batches; /* the largest batch count its tasks reported */
	int nids;
	int *ids; /* array task ids with this signature */
	int ntech;
	struct tsweep *ts; /* the caller's; signature_pass leaves it NULL */
	int ncached;	   /* techniques taken from the profile cache */
	int closed;	   /* its close calls were looked for (close_calls) */
};

/* Run the signature pass for the nids ids (up to 16 at once, each under
 * o->timeout), reports and logs in the folder work. Returns the number of
 * distinct signatures with the array in *sigs_out (free with sigs_free),
 * or -1 on ENOMEM. Tasks without a signature are named on stderr. */
int signature_pass(const struct opts *o, const char *work, int nids,
		   const int *ids, struct sig **sigs_out);

/* Free the signature fields of n sigs and the array (not ts). */
void sigs_free(struct sig *sigs, int n);

#endif /* SATURN_PROFILER_SIGNATURES_H */
