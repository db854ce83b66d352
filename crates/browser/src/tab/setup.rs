//! The one setup list for every session a tab follows: its page, and each
//! out-of-process frame attached to it (paused until this is done, so nothing
//! in it runs unobserved).

use sightline_cdp::protocol::{emulation, inspector, network, page, target};
use sightline_cdp::{CdpError, Client, SessionId};

use crate::settle::PROBE_SCRIPT;

/// What we ask of every page and frame session: attach its child targets (flattened),
/// paused until we have set them up.
const AUTO_ATTACH: target::SetAutoAttach =
    target::SetAutoAttach { auto_attach: true, wait_for_debugger_on_start: true, flatten: true };

/// Which kind of session is set up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SessionKind {
    /// The page's own session, shown at this viewport (CSS pixels).
    Page { viewport: (u32, u32) },
    /// An out-of-process frame's: it has no viewport or lifecycle of its own to set.
    Frame,
}

/// Enable what we listen to on a session. Sent together (each is written to the
/// socket on its first poll, and Chromium runs one session's commands in order).
pub(crate) async fn setup_session(c: &Client, s: &SessionId, kind: SessionKind) -> Result<(), CdpError> {
    let s = Some(s);
    let page_only = async {
        let SessionKind::Page { viewport: (w, h) } = kind else { return Ok(()) };
        let metrics =
            emulation::SetDeviceMetricsOverride { width: w, height: h, device_scale_factor: 1.0, mobile: false };
        let (m, l) =
            tokio::join!(c.execute(s, &metrics), c.execute(s, &page::SetLifecycleEventsEnabled { enabled: true }));
        m?;
        l.map(|_| ())
    };
    let (inspector, page_enable, network, probe, auto_attach, page_only, chooser) = tokio::join!(
        // Inspector.targetCrashed only arrives with the domain enabled.
        c.execute(s, &inspector::Enable {}),
        c.execute(s, &page::Enable {}),
        c.execute(s, &network::Enable {}),
        c.execute(s, &page::AddScriptToEvaluateOnNewDocument { source: PROBE_SCRIPT }),
        c.execute(s, &AUTO_ATTACH),
        page_only,
        // No native file dialog ever blocks the page: `Page.fileChooserOpened` instead.
        c.execute(s, &page::SetInterceptFileChooserDialog { enabled: true }),
    );
    inspector?;
    page_enable?;
    network?;
    probe?;
    auto_attach?;
    page_only?;
    chooser?;
    Ok(())
}
