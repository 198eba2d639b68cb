//! "Attach a sale" on the Connections screen: the proposal of `adapter init` as a form, a
//! preview reading as it is edited, and the sale saved as a profile with its adapter file.
//! Each command calls one core step (`stockguard_core::adapter::attach`); what is wrong with a
//! field comes back in the form's check, in the field, not as an error.

use stockguard_core::adapter::attach::{self, AttachError, AttachProfile, AttachTarget, Attached, Previewed, Proposed};
use stockguard_core::adapter::init::form::ProposalForm;
use stockguard_core::adapter::AdapterError;
use stockguard_core::profile::ProfileStore;
use stockguard_core::step::chain;

use crate::error::{DesktopError, MessageCode, Said};

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_propose(target: AttachTarget) -> Result<Proposed, DesktopError> {
    attach::propose(&target).await.map_err(failed)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_preview(target: AttachTarget, form: ProposalForm) -> Result<Previewed, DesktopError> {
    attach::preview(&target, &form).await.map_err(failed)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_save(
    target: AttachTarget,
    form: ProposalForm,
    profile: AttachProfile,
    reason: String,
) -> Result<Attached, DesktopError> {
    let profiles = ProfileStore::default_path()?;
    attach::save(&profiles, &target, &form, &profile, &reason).await.map_err(failed)
}

/// Each step's error by its kind: the profile's and the servers' as everywhere; the adapter's
/// state database as a connection; a form that is not yet a file as the input to check.
fn failed(e: AttachError) -> DesktopError {
    use MessageCode as C;
    let m = chain(&e);
    match e {
        AttachError::Profile(e) => e.into(),
        AttachError::Connect(e) => e.into(),
        AttachError::Refused(e) | AttachError::Adapter(AdapterError::NotAllowed(e)) => e.into(),
        AttachError::Adapter(AdapterError::StateConnect(e)) => e.into(),
        AttachError::NoEnvironment => DesktopError::Invalid(Said::new(C::ChooseEnvironment, &[], m)),
        AttachError::NoReason => DesktopError::Invalid(Said::new(C::ReasonRequired, &[], m)),
        AttachError::Adapter(AdapterError::NoStateDb) | AttachError::Form(_) => DesktopError::Invalid(m.into()),
        AttachError::Adapter(_) | AttachError::WriteFile { .. } => {
            DesktopError::Query(Said::new(C::QueryFailed, &[("detail", &m)], m.clone()))
        }
    }
}
