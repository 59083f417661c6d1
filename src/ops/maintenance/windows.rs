//! Maintenance windows on [`Maintenance`]: schedule (through
//! [`Maintenance::add`] with `ends_at`), extend and cancel (the estate
//! listing is `super::estate`). Each is a plan (`Context::extend`,
//! `Context::cancel`) written by the one applier, like every change; who
//! may extend or cancel a window is exactly who may release it (the
//! release floors and `baremetal:node:maintenance:remove`).

use super::{Maintenance, parse_uuid};
use crate::authority::caller::Caller;
use crate::authority::entry::EntryView;
use crate::error::Result;
use crate::store::apply::Reads;
use chrono::NaiveDateTime;

impl Maintenance {
    /// Moves a window's end later (`PATCH …/maintenance/{uuid}`): an active
    /// window or a scheduled one. Earlier, or in the past, is 400 and
    /// changes nothing; an entry without an end is not a window (400).
    pub async fn extend(
        &self,
        caller: &Caller,
        ident: &str,
        entry_uuid: &str,
        ends_at: NaiveDateTime,
    ) -> Result<EntryView> {
        let uuid = parse_uuid(entry_uuid)?;
        self.change(caller, ident, Reads::Windows, |ctx| ctx.extend(&uuid, ends_at)).await
    }

    /// Removes a window that has not started (`DELETE` of a scheduled
    /// window). An active entry is refused with 409: end it by releasing it.
    pub async fn cancel(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        let uuid = parse_uuid(entry_uuid)?;
        self.change(caller, ident, Reads::Windows, |ctx| ctx.cancel(&uuid)).await
    }
}
