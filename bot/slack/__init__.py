"""The Slack edge: Slack payloads in, `bot.pipeline` in the middle, Block Kit out (issue 17).

    app          build_app: the Bolt app wired from the modules below (and the event dedupe middleware)
    payloads     Slack payloads parsed once: SlashCommand, Message (mention/DM), Click (button)
    answering    a question (or a button's query) answered with its channel's settings, rendered, never raising
    slash        /gpu: one message per command (inside the ack when fast, else once through response_url)
    commands     which /gpu texts are commands (set, unset, settings, digest, alert), not questions
    settings_cmd the replies to those commands, the admin rule and the record of every change
    events       @-mentions and DMs (one reply per message, in its thread); uninstall and revoked tokens
    actions      buttons: share, refine (spot/on-demand, more, pitfalls, did-you-mean, workload), why, chart
    home         App Home: what gpubot answers, data freshness, digests, the workspace defaults' form
    blocks/      Block Kit builders, by what they render (answers, buttons, settings, home, digest)
    escape       mrkdwn and plain_text escaping (mentions and broadcasts are shown, never executed)
    limits       Slack's documented limits, enforced in one place (`fit_blocks`)
    tables       where the offers table goes in a message
    delivery     sending: refused blocks sent again as text, share public-first, failures in plain words
    auth         who may change workspace-wide things (users.info, cached briefly)
    oauth        WebClients, installation and OAuth-state stores, forgetting an uninstalled workspace
    help         the command lines added to the help answer
    history      price-history charts uploaded to Slack, and the history summary message
    digest       the daily digest: a channel's digest answer and the scheduled, post-once delivery

Nothing outside `bot/` imports Slack libraries; this package imports nothing at start-up.
"""
