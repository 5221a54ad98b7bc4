/* sweep_close.c - close calls between the finished sweeps of one task:
 * counts where a fit's error would pick the technique (sweep.h).
 */
#include "config.h"

#include "sweep.h"

/* A count's usable time in a finished sweep, or 0; a lent count is the
 * other technique's measurement, not a contender of its own. */
static double contender(const saturn_sweep_t *sw, int g, int *predicted)
{
	const saturn_point_t *p;

	if (!sw || !saturn_sweep_done(sw) || saturn_sweep_borrowed(sw, g) ||
	    !(p = saturn_sweep_point(sw, g)))
		return 0;
	*predicted = p->state == SATURN_PT_PREDICTED;
	return p->state == SATURN_PT_MEASURED ||
			       p->state == SATURN_PT_PREDICTED
		   ? p->sec_per_batch
		   : 0;
}

int saturn_sweep_close_calls(saturn_sweep_t *const *sws, int n, double tol,
			     int max, int *who, int *gpus)
{
	int maxg = 0, found = 0;
	double gaps[SATURN_SWEEP_CLOSE_MAX];

	if (max < 1)
		return 0;
	if (max > SATURN_SWEEP_CLOSE_MAX)
		max = SATURN_SWEEP_CLOSE_MAX;
	/* the largest count of any sweep (a sweep has a point on lo..hi) */
	for (int k = 0; k < n; k++)
		for (int g = SATURN_SCALE_MAX_GPUS; sws[k] && g > maxg; g--)
			if (saturn_sweep_point(sws[k], g)) {
				maxg = g;
				break;
			}
	for (int g = 1; g <= maxg; g++) {
		int b1 = -1, b2 = -1, p1 = 0, p2 = 0;
		double t1 = 0, t2 = 0, gap;

		for (int k = 0; k < n; k++) {
			int pr = 0;
			double t = contender(sws[k], g, &pr);

			if (!(t > 0))
				continue;
			if (b1 < 0 || t < t1) {
				b2 = b1, t2 = t1, p2 = p1;
				b1 = k, t1 = t, p1 = pr;
			} else if (b2 < 0 || t < t2) {
				b2 = k, t2 = t, p2 = pr;
			}
		}
		if (b2 < 0 || (!p1 && !p2))
			continue;
		gap = t2 / t1 - 1;
		if (!(gap <= tol))
			continue;
		/* the closest calls first; each predicted contender measured */
		for (int side = 0; side < 2; side++) {
			int k = side ? b2 : b1, at = found;

			if (!(side ? p2 : p1))
				continue;
			if (found == max && !(gap < gaps[found - 1]))
				break;
			if (found == max)
				at = --found;
			while (at > 0 && gap < gaps[at - 1]) {
				who[at] = who[at - 1];
				gpus[at] = gpus[at - 1];
				gaps[at] = gaps[at - 1];
				at--;
			}
			who[at] = k;
			gpus[at] = g;
			gaps[at] = gap;
			found++;
		}
	}
	return found;
}

