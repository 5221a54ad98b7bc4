/* signatures.c - saturn-profile's signature pass (signatures.h): the batch
 * script once per array task id in SATURN_MODE=signature, in parallel, and
 * the ids grouped by the signature each reports.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobenv.h"
#include "signatures.h"
#include "trials.h"

int signature_pass(const struct opts *o, const char *work, int nids,
		   const int *ids, struct sig **sigs_out)
{
	struct sig *sigs = NULL;
	int nsigs = 0, ok = 0;
	int par = (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (par < 1)
		par = 1;
	if (par > 16)
		par = 16;
	for (int base = 0; base < nids; base += par) {
		pid_t pids[16];
		int n = nids - base < par ? nids - base : par;

		for (int k = 0; k < n; k++) {
			char report[PATH_MAX], log[PATH_MAX];
			char *env[8];
			int id = ids[base + k];

			snprintf(report, sizeof(report), "%s/sig-%d.json", work,
				 id);
			snprintf(log, sizeof(log), "%s/sig-%d.log", work, id);
			if (asprintf(&env[0], "SLURM_ARRAY_TASK_ID=%d", id) <
				0 ||
			    asprintf(&env[1], SATURN_REPORT_FILE_ENV "=%s", report) <
				0 ||
			    asprintf(&env[2], SATURN_BATCH_ENV "=%s", o->batch) < 0)
				return -1;
			env[3] = SATURN_MODE_ENV "=signature";
			env[4] = "SLURM_OVERLAP=1";
			env[5] = NULL;
			pids[k] = spawn_script(o->script, log, env);
			free(env[0]);
			free(env[1]);
			free(env[2]);
		}
		for (int k = 0; k < n; k++) {
			int id = ids[base + k], to, st;
			char report[PATH_MAX];
			json_object *r;
			const char *sg;
			double b;
			struct sig *s = NULL;

			st = wait_deadline(pids[k], mono() + o->timeout, &to);
			snprintf(report, sizeof(report), "%s/sig-%d.json", work,
				 id);
			r = load_report(report);
			sg = r ? report_str(r, "signature") : NULL;
			b = r ? report_num(r, "batches") : -1;
			if (!sg || !*sg || b < 0) {
				fprintf(stderr,
					"%s: task %d: no signature (%s; log "
					"%s/sig-%d.log)\n",
					prog, id,
					to		? "timed out"
					: WIFEXITED(st) ? "see the log"
							: "killed",
					work, id);
				json_object_put(r);
				continue;
			}
			for (int i = 0; i < nsigs; i++)
				if (strcmp(sigs[i].signature, sg) == 0)
					s = &sigs[i];
			if (!s) {
				struct sig *ns =
				    realloc(sigs, (nsigs + 1) * sizeof(*ns));

				if (!ns)
					return -1;
				sigs = ns;
				s = &sigs[nsigs++];
				memset(s, 0, sizeof(*s));
				s->signature = xstrdup(sg);
				s->batches = b;
				s->ids = calloc(nids, sizeof(int));
			}
			if (b > s->batches)
				s->batches = b;
			s->ids[s->nids++] = id;
			ok++;
			json_object_put(r);
		}
	}
	*sigs_out = sigs;
	if (!o->quiet)
		fprintf(stderr, "%s: %d of %d tasks: %d distinct signature%s\n",
			prog, ok, nids, nsigs, nsigs == 1 ? "" : "s");
	return nsigs;
}

void sigs_free(struct sig *sigs, int n)
{
	for (int i = 0; sigs && i < n; i++) {
		free(sigs[i].signature);
		free(sigs[i].ids);
	}
	free(sigs);
}
