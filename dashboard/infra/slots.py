"""The server-wide compute slots: a counting limit on concurrent computations, with a unit kept for
people and a fair share between sessions (issue 53, high 3).

:mod:`dashboard.infra.jobs` makes the process-wide instance (``COMPUTE_SLOTS``) and goes through it
for every :class:`~dashboard.infra.jobs.Job` and every
:func:`~dashboard.infra.jobs.compute_slot`; it re-exports :class:`ComputeSlots` and
:func:`current_owner`. The rules and why are in docs/security.md, "Shared server".
"""
from __future__ import annotations

import threading

__all__ = ["ComputeSlots", "current_owner"]


class _Ticket:
    __slots__ = ("units", "granted", "done", "priority", "preempt", "preempted", "owner", "seq")

    def __init__(self, units, priority=False, preempt=None, owner=None, seq=0):
        self.units = units
        self.granted = False
        self.done = False
        self.priority = bool(priority)
        self.preempt = preempt
        self.preempted = False
        self.owner = owner
        self.seq = seq


#: The default ``owner`` of a request: the session of the current script run (:func:`current_owner`).
_AUTO = object()


def current_owner():
    """The Streamlit session id of the script run in this thread, or None (no script run: a job's
    thread, a test, bare mode): whose request it is, for :class:`ComputeSlots`' fair share."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.session_id


class ComputeSlots:
    """A counting limit on concurrent computations, shared fairly between sessions (thread-safe).

    Parameters
    ----------
    capacity : int
        Units available (>= 1).
    reserved : int, optional
        Units kept for a person's requests (:func:`dashboard.infra.jobs.interactive`: the live Learn page's fits):
        ordinary requests together hold at most ``capacity - reserved``. Default 1 when
        ``capacity > 1``, else 0 (a 1-unit server keeps nothing back). Clipped to
        [0, capacity - 1].

    Notes
    -----
    :meth:`request` joins the line and returns a ticket; :meth:`wait` blocks until the ticket
    is granted; :meth:`release` gives the units back, or leaves the line when the ticket was not
    granted yet. A request for more units than it may ever hold (:meth:`clip`) asks for that most.

    **Who is served next** (issue 53, high 3). Among the tickets in line, a person's request
    (*priority*) comes before every ordinary one; within each kind, the ticket whose owner (its
    session) holds the fewest units now comes first, then the one that has waited longest (the
    earliest request). That ticket is granted when its units fit (a person's: in the capacity; an
    ordinary one's: also within the ordinary share, ``capacity - reserved``); if they do not, no
    later ticket passes it, so a large request is not starved by small ones. Requests without an
    owner count as holding nothing: among themselves they are first come, first served.

    **The slot kept for people.** Ordinary work (jobs a Run button starts, Compare's sweep, the λ
    prefetch) holds at most ``capacity - reserved`` units together, so a live λ step, whose wait
    is bounded (issue 41), finds the last unit free even while a parallel bootstrap runs: the
    round-5 load test measured 6 of 20 live steps refused after 2 s behind a bootstrap holding
    both units of a 2-core server. A parallel job asks for at most that share, and its worker
    count follows (:attr:`dashboard.infra.jobs.Job.units`).

    **Preemption** (issue 41: a live λ step waited behind other sessions' prefetches). When a
    priority request cannot be granted at once it asks enough *preemptible* holders (work done
    ahead of need: the λ prefetch) to stop, through the ``preempt`` callback each gave with its
    own request. A preempted holder stops at its next progress report and gives its units back;
    nothing else is ever preempted.
    """

    def __init__(self, capacity: int, reserved: int | None = None):
        self.capacity = max(1, int(capacity))
        keep = (1 if self.capacity > 1 else 0) if reserved is None else int(reserved)
        self.reserved = min(self.capacity - 1, max(0, keep))
        self._used = 0
        self._ordinary = 0  # units held by ordinary (not priority) tickets
        self._line: list = []
        self._held: list = []
        self._seq = 0
        self._cond = threading.Condition()

    @property
    def ordinary_capacity(self) -> int:
        """Units ordinary (not a person's) requests may hold together: ``capacity - reserved``."""
        return self.capacity - self.reserved

    def wait_while_people(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds while a person's request (a live λ step) holds units.

        Ordinary work calls it at each progress report (:meth:`dashboard.infra.jobs.Job.report`),
        so a running job gives the cores to a person's step instead of sharing them: a slot kept for
        people decides who may start, this decides who runs while both do.

        Returns
        -------
        bool
            True when no person's request holds units (at once, or within ``timeout``).
        """
        with self._cond:
            return self._cond.wait_for(lambda: self._used == self._ordinary, timeout)

    @property
    def in_use(self) -> int:
        """Units held by running computations."""
        with self._cond:
            return self._used

    @property
    def waiting(self) -> int:
        """Requests in line."""
        with self._cond:
            return len(self._line)

    def clip(self, units: int, *, priority: bool = False) -> int:
        """The units a request for ``units`` asks for (a parallel job's worker count).

        Parameters
        ----------
        units : int
            Units (worker processes) wanted.
        priority : bool, default=False
            A person's request (may use every unit) rather than ordinary work.

        Returns
        -------
        int
            ``units`` within [1, capacity] for a person's request, [1, :attr:`ordinary_capacity`]
            for an ordinary one.
        """
        top = self.capacity if priority else self.ordinary_capacity
        return min(top, max(1, int(units)))

    def held_by(self, owner) -> int:
        """Units the granted requests of ``owner`` hold now.

        Parameters
        ----------
        owner : hashable or None
            A session id (:func:`current_owner`); None holds nothing.

        Returns
        -------
        int
        """
        with self._cond:
            return self._held_by(owner)

    def _held_by(self, owner) -> int:
        if owner is None:
            return 0
        return sum(t.units for t in self._held if t.owner == owner)

    def _next(self):
        """The ticket served next: a person's first, then the fewest units held, then the oldest."""
        if not self._line:
            return None
        return min(self._line, key=lambda t: (not t.priority, self._held_by(t.owner), t.seq))

    def _fits(self, ticket) -> bool:
        if self._used + ticket.units > self.capacity:
            return False
        return ticket.priority or self._ordinary + ticket.units <= self.ordinary_capacity

    def _grant(self) -> None:
        while True:
            ticket = self._next()
            if ticket is None or not self._fits(ticket):
                break
            self._line.remove(ticket)
            ticket.granted = True
            self._used += ticket.units
            if not ticket.priority:
                self._ordinary += ticket.units
            self._held.append(ticket)
        self._cond.notify_all()

    def request(self, units: int = 1, *, priority: bool = False, preempt=None, owner=_AUTO) -> _Ticket:
        """Join the line for ``units`` units (:meth:`clip`-ped); returns the ticket.

        Parameters
        ----------
        units : int, default=1
        priority : bool, default=False
            A person's request: served before every ordinary request, may use the reserved units
            and, if its units are not free, preempts preemptible holders (see the class notes).
        preempt : callable, optional
            ``preempt()`` asks this request's work to stop: it makes the request preemptible.
            Called at most once, outside the lock.
        owner : hashable or None, optional
            Whose request it is, for the fair share (a session id). Default: the session of the
            script run in this thread (:func:`current_owner`); None: nobody's.
        """
        owner = current_owner() if owner is _AUTO else owner
        victims = []
        with self._cond:
            self._seq += 1
            ticket = _Ticket(self.clip(units, priority=priority), priority, preempt, owner, self._seq)
            self._line.append(ticket)
            self._grant()
            if ticket.priority and not ticket.granted:
                short = self._used + sum(t.units for t in self._line if t.priority and t is not ticket) \
                    + ticket.units - self.capacity
                for held in reversed(self._held):  # the most recent first: the least work lost
                    if short <= 0:
                        break
                    if held.preempt is not None and not held.preempted:
                        held.preempted = True
                        victims.append(held.preempt)
                        short -= held.units
        for stop in victims:
            stop()
        return ticket

    def wait(self, ticket, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds until ``ticket`` is granted; returns whether it is."""
        with self._cond:
            return self._cond.wait_for(lambda: ticket.granted, timeout)

    def release(self, ticket) -> None:
        """Give a granted ticket's units back, or take a waiting one out of the line (idempotent)."""
        with self._cond:
            if ticket.done:
                return
            ticket.done = True
            if ticket.granted:
                self._used -= ticket.units
                if not ticket.priority:
                    self._ordinary -= ticket.units
                self._held.remove(ticket)
            else:
                self._line.remove(ticket)
            self._grant()

    def describe(self) -> str:
        """"3 of 4 compute slots busy on this server, 2 job(s) in line" (for a waiting job's status),
        and, when units are reserved, that the last one(s) are kept for live fits."""
        with self._cond:
            used, line = self._used, len(self._line)
        kept = "" if not self.reserved else (
            "; the last slot is kept for live fits" if self.reserved == 1 else
            f"; the last {self.reserved} slots are kept for live fits")
        return f"{used} of {self.capacity} compute slots busy on this server, {line} job(s) in line{kept}"
