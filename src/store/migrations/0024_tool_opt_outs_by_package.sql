-- A per-agent opt-out names the package as well as the tool: an opt-out of one package's tool
-- never carries over to another package that declares a tool of the same name (a replaced or
-- third-party package). Rows written before are given the package that declared each tool name
-- when this migration was written; a row naming a tool no package declared then keeps an empty
-- package id, which matches no tool, so nothing is lost and nothing is withheld by accident.
alter table agent_tools add column package_id text not null default '';

update agent_tools t
   set package_id = known.package_id
  from (values
    ('browser_navigate', 'mesh.browser'),
    ('browser_read', 'mesh.browser'),
    ('browser_act', 'mesh.browser'),
    ('browser_screenshot', 'mesh.browser'),
    ('conversation_search', 'mesh.conversations'),
    ('query_datadog_metrics', 'mesh.datadog'),
    ('search_datadog_logs', 'mesh.datadog'),
    ('list_datadog_monitors', 'mesh.datadog'),
    ('post_datadog_event', 'mesh.datadog'),
    ('mute_datadog_monitor', 'mesh.datadog'),
    ('list_deepsource_issues', 'mesh.deepsource'),
    ('get_deepsource_pr_checks', 'mesh.deepsource'),
    ('checkout_github_repo', 'mesh.github'),
    ('create_github_pull_request', 'mesh.github'),
    ('get_github_issue', 'mesh.github'),
    ('get_github_pull_request', 'mesh.github'),
    ('list_github_pull_request_files', 'mesh.github'),
    ('list_github_pull_request_checks', 'mesh.github'),
    ('create_github_issue', 'mesh.github'),
    ('comment_on_github_issue', 'mesh.github'),
    ('create_github_pull_request_review', 'mesh.github'),
    ('search_linear_issues', 'mesh.linear'),
    ('get_linear_issue', 'mesh.linear'),
    ('create_linear_issue', 'mesh.linear'),
    ('comment_on_linear_issue', 'mesh.linear'),
    ('update_linear_issue_state', 'mesh.linear'),
    ('remember', 'mesh.memory'),
    ('recall', 'mesh.memory'),
    ('amend', 'mesh.memory'),
    ('forget', 'mesh.memory'),
    ('list_sentry_issues', 'mesh.sentry'),
    ('get_sentry_issue', 'mesh.sentry'),
    ('get_sentry_latest_event', 'mesh.sentry'),
    ('resolve_sentry_issue', 'mesh.sentry'),
    ('assign_sentry_issue', 'mesh.sentry'),
    ('post_slack_message', 'mesh.slack'),
    ('web_search', 'mesh.web'),
    ('web_read', 'mesh.web'),
    ('workspace_exec', 'mesh.workspace'),
    ('workspace_read_file', 'mesh.workspace'),
    ('workspace_write_file', 'mesh.workspace')
  ) as known (tool_name, package_id)
 where t.tool_name = known.tool_name;

alter table agent_tools alter column package_id drop default;
alter table agent_tools drop constraint agent_tools_pkey;
alter table agent_tools add primary key (agent_id, package_id, tool_name);
