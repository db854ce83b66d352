pub async fn run(_a: &crate::cli::Args) -> anyhow::Result<u8> { anyhow::bail!("bench: not yet") }
