//! Run slots shared fairly between tenants (API keys) who do not trust
//! each other. A run takes a free slot at once; when none is free it
//! waits, and each slot that frees goes to the waiting tenant with the
//! fewest runs in progress, and among those to the one served least
//! recently (round robin), its runs in the order they came.
//! So one tenant's flood of slow runs cannot hold every slot while another
//! waits: the other's next run takes the next slot that frees, whatever
//! the flood queued before it. The queue is bounded, and a flood's 503s
//! are its own: a tenant may queue while the queue has room, or while it has fewer
//! than a quarter of the queue's length waiting, so one that fills the
//! queue is refused, and every other tenant can still queue its quarter
//! (the queue holds at most its length plus a quarter per tenant). Idle
//! slots and room are never held back: a tenant alone uses them all,
//! unless the operator caps the slots one tenant may hold at once
//! (`--run-slots-per-key`): then its runs past the cap wait, and the slots
//! they would have taken serve other tenants.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::problem::Problem;

/// The slots, the queue and who waits in it.
pub struct FairSlots {
    slots: usize,
    queue: usize,
    per_tenant_queue: usize,
    /// Slots one tenant may hold at once.
    per_tenant_slots: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    running: usize,
    waiting: usize,
    /// Numbers the slots handed out, for the round robin.
    grants: u64,
    tenants: HashMap<String, Tenant>,
}

#[derive(Default)]
struct Tenant {
    running: usize,
    /// When this tenant was last given a slot (0: not since it was idle).
    last_grant: u64,
    waiting: VecDeque<oneshot::Sender<FairSlot>>,
}

/// A slot, given back when dropped.
pub struct FairSlot {
    /// `None` once disarmed: a slot that was never taken after all.
    pool: Option<Arc<FairSlots>>,
    tenant: String,
}

impl FairSlots {
    /// `slots` runs at once, at most `per_tenant_slots` of them one
    /// tenant's (`None`: all), `queue` waiting, and past it a quarter of
    /// `queue` (at least one, none without a queue) for each tenant.
    pub fn new(slots: usize, queue: usize, per_tenant_slots: Option<usize>) -> Arc<Self> {
        let slots = slots.max(1);
        Arc::new(Self {
            slots,
            queue,
            per_tenant_queue: if queue == 0 { 0 } else { (queue / 4).max(1) },
            per_tenant_slots: per_tenant_slots.unwrap_or(slots).clamp(1, slots),
            inner: Mutex::default(),
        })
    }

    /// Runs at once.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for `tenant`, now or once the fair order gives it one; a 503
    /// (with `Retry-After`) when the queue, or this tenant's share of it,
    /// is full.
    pub async fn acquire(self: &Arc<Self>, tenant: &str) -> Result<FairSlot, Problem> {
        let granted = {
            let mut inner = self.lock();
            let holding = inner.tenants.get(tenant).map_or(0, |t| t.running);
            if inner.running < self.slots && holding < self.per_tenant_slots {
                // A free slot means nobody who may take it waits: slots are
                // handed to waiters as they free.
                inner.running += 1;
                inner.grants += 1;
                let grant = inner.grants;
                let t = inner.tenants.entry(tenant.to_string()).or_default();
                t.running += 1;
                t.last_grant = grant;
                return Ok(FairSlot { pool: Some(self.clone()), tenant: tenant.to_string() });
            }
            if inner.waiting >= self.queue {
                // Runs whose clients went away wait no more.
                let mut gone = 0;
                for t in inner.tenants.values_mut() {
                    let before = t.waiting.len();
                    t.waiting.retain(|w| !w.is_closed());
                    gone += before - t.waiting.len();
                }
                inner.waiting -= gone;
            }
            let waiting_here = inner.tenants.get(tenant).map_or(0, |t| t.waiting.len());
            // The queue has room, or this tenant waits for less than its
            // share: a flood that fills the queue is refused its own runs,
            // never another tenant's first ones.
            if inner.waiting >= self.queue && waiting_here >= self.per_tenant_queue {
                let why = format!(
                    "{} runs in progress and {} waiting, {waiting_here} of them with this key",
                    self.slots, inner.waiting
                );
                return Err(Problem::unavailable(format!("the server is busy ({why}); retry shortly"), Some(1)));
            }
            let (tell, granted) = oneshot::channel();
            inner.waiting += 1;
            inner.tenants.entry(tenant.to_string()).or_default().waiting.push_back(tell);
            granted
        };
        // Dropped before it is granted (the client went away): its place is
        // skipped; dropped after, the slot in the channel is given back.
        granted.await.map_err(|_| Problem::internal("the run queue was dropped"))
    }

    /// A slot freed by `tenant`: to the next waiter in the fair order.
    fn release(self: &Arc<Self>, tenant: &str) {
        let mut inner = self.lock();
        inner.running -= 1;
        if let Some(t) = inner.tenants.get_mut(tenant) {
            t.running -= 1;
        }
        while inner.running < self.slots {
            let Some(next) = inner
                .tenants
                .iter()
                .filter(|(_, t)| !t.waiting.is_empty() && t.running < self.per_tenant_slots)
                .min_by_key(|(name, t)| (t.running, t.last_grant, name.as_str()))
                .map(|(name, _)| name.clone())
            else {
                break;
            };
            inner.waiting -= 1;
            inner.running += 1;
            inner.grants += 1;
            let grant = inner.grants;
            let tenant = inner.tenants.get_mut(&next).expect("the tenant found above");
            let tell = tenant.waiting.pop_front().expect("a waiter found above");
            tenant.running += 1;
            tenant.last_grant = grant;
            let slot = FairSlot { pool: Some(self.clone()), tenant: next.clone() };
            if let Err(mut slot) = tell.send(slot) {
                // Its request is gone: the slot is not taken after all
                // (disarmed, so that its drop does not release it again).
                slot.pool = None;
                inner.running -= 1;
                if let Some(t) = inner.tenants.get_mut(&next) {
                    t.running -= 1;
                }
            }
        }
        inner.tenants.retain(|_, t| t.running > 0 || !t.waiting.is_empty());
    }
}

impl Drop for FairSlot {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.release(&self.tenant);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `slot`'s future has a slot now (without waiting).
    fn ready(waiting: &mut (impl std::future::Future<Output = Result<FairSlot, Problem>> + Unpin)) -> Option<FairSlot> {
        let waker = std::task::Waker::noop();
        match std::pin::Pin::new(waiting).poll(&mut std::task::Context::from_waker(waker)) {
            std::task::Poll::Ready(slot) => Some(slot.expect("a slot")),
            std::task::Poll::Pending => None,
        }
    }

    /// A tenant with every slot and a queue of waiting runs: another
    /// tenant's run takes the next slot that frees, before the flood's.
    #[tokio::test]
    async fn the_next_free_slot_goes_to_the_tenant_with_fewest_runs() {
        let pool = FairSlots::new(2, 16, None);
        let mut flood = vec![pool.acquire("a").await.unwrap(), pool.acquire("a").await.unwrap()];
        let mut a_waiting: Vec<_> = (0..3).map(|_| Box::pin(pool.acquire("a"))).collect();
        for w in &mut a_waiting {
            assert!(ready(w).is_none());
        }
        let mut b = Box::pin(pool.acquire("b"));
        assert!(ready(&mut b).is_none(), "no slot is free yet");
        drop(flood.pop());
        let b_slot = ready(&mut b).expect("b's run took the freed slot, ahead of a's three");
        assert!(a_waiting.iter_mut().all(|w| ready(w).is_none()));
        drop(b_slot);
        let a_next = ready(&mut a_waiting[0]).expect("then a's, in order");
        assert!(ready(&mut a_waiting[1]).is_none());
        drop((a_next, flood));
    }

    /// One slot: as it frees, it goes to the other tenant before the
    /// tenant that just had it, whatever that one queued first.
    #[tokio::test]
    async fn one_slot_goes_round_between_tenants() {
        let pool = FairSlots::new(1, 16, None);
        let first = pool.acquire("a").await.unwrap();
        let mut a_next = Box::pin(pool.acquire("a"));
        assert!(ready(&mut a_next).is_none());
        let mut b = Box::pin(pool.acquire("b"));
        assert!(ready(&mut b).is_none());
        drop(first);
        let b_slot = ready(&mut b).expect("b's run, though a's waited longer");
        assert!(ready(&mut a_next).is_none());
        drop(b_slot);
        assert!(ready(&mut a_next).is_some());
    }

    /// A flood fills the queue and gets 503s; another tenant still queues
    /// its share.
    #[tokio::test]
    async fn a_flood_fills_the_queue_but_not_the_others_share() {
        let pool = FairSlots::new(1, 8, None);
        let _running = pool.acquire("a").await.unwrap();
        let mut queued: Vec<_> = (0..8).map(|_| Box::pin(pool.acquire("a"))).collect();
        for w in &mut queued {
            assert!(ready(w).is_none(), "a alone may use the whole queue");
        }
        let refused = pool.acquire("a").await.err().expect("a ninth waiting run of a is refused");
        assert_eq!(refused.status, 503);
        let mut b: Vec<_> = (0..2).map(|_| Box::pin(pool.acquire("b"))).collect();
        for w in &mut b {
            assert!(ready(w).is_none(), "b waits, it is not refused");
        }
        assert!(pool.acquire("b").await.is_err(), "past its share, b is refused too");
    }

    /// A waiter that goes away is skipped, and a slot handed to one that
    /// went away is given back.
    #[tokio::test]
    async fn waiters_that_leave_give_their_place_back() {
        let pool = FairSlots::new(1, 8, None);
        let first = pool.acquire("a").await.unwrap();
        let mut gone = Box::pin(pool.acquire("b"));
        assert!(ready(&mut gone).is_none());
        let mut next = Box::pin(pool.acquire("c"));
        assert!(ready(&mut next).is_none());
        drop(gone);
        drop(first);
        let slot = ready(&mut next).expect("c's run took the slot b's left");
        drop(slot);
        let again = pool.acquire("d").await.unwrap();
        drop(again);
        let inner = pool.lock();
        assert_eq!((inner.running, inner.waiting, inner.tenants.len()), (0, 0, 0));
    }

    /// With a cap of one slot per tenant, a tenant's second run waits even
    /// with a slot free, which another tenant's run then takes.
    #[tokio::test]
    async fn a_tenant_past_its_cap_waits_and_others_take_the_slots() {
        let pool = FairSlots::new(3, 16, Some(1));
        let a = pool.acquire("a").await.unwrap();
        let mut a_second = Box::pin(pool.acquire("a"));
        assert!(ready(&mut a_second).is_none(), "a holds its one slot; two are free but not a's");
        let b = pool.acquire("b").await.expect("b takes a free slot at once");
        drop(b);
        assert!(ready(&mut a_second).is_none(), "b's slot freed: a is still at its cap");
        drop(a);
        let _a_second = ready(&mut a_second).expect("a's own slot freed: its next run goes");
    }
}
