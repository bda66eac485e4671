//! `http.route`: request paths matched against a fixed table of templates.

/// Why a route table was rejected.
///
/// ```
/// use gym_metrics_api::{RouteTable, RouteTableError};
/// assert!(matches!(RouteTable::new(["verify"]), Err(RouteTableError::NotAbsolute { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteTableError {
    /// A template that does not start with `/`.
    #[error("route template {template:?} does not start with '/': write it as the path a request carries, e.g. \"/{template}\"")]
    NotAbsolute {
        /// The offending template.
        template: &'static str,
    },
    /// A segment with a `{` or `}` that is not one whole `{name}` parameter.
    #[error("route template {template:?} has a malformed parameter segment {segment:?}: a parameter is a whole segment, e.g. \"/tasks/{{id}}\"")]
    BadParameter {
        /// The offending template.
        template: &'static str,
        /// The offending segment.
        segment: &'static str,
    },
    /// The same template twice.
    #[error("route template {template:?} is listed twice: list each route once")]
    Duplicate {
        /// The repeated template.
        template: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    Literal(&'static str),
    Parameter,
}

#[derive(Debug, Clone)]
struct Route {
    template: &'static str,
    segments: Box<[Segment]>,
}

/// The routes a server answers, as templates (`/verify`, `/tasks/{id}`):
/// the only source of `http.route` values, so a raw path never becomes one.
///
/// A path matches a template with as many `/`-separated segments when every
/// literal segment is equal and every `{name}` segment is non-empty. The
/// first matching template, in the order given, wins: list `/tasks/new`
/// before `/tasks/{id}`. Paths are matched as they arrive (no decoding, no
/// trailing-slash folding); the query string is never part of a path.
///
/// ```
/// use gym_metrics_api::RouteTable;
/// let routes = RouteTable::new(["/verify", "/tasks/new", "/tasks/{id}"])?;
/// assert_eq!(routes.matches("/verify"), Some("/verify"));
/// assert_eq!(routes.matches("/tasks/42"), Some("/tasks/{id}"));
/// assert_eq!(routes.matches("/tasks/new"), Some("/tasks/new"));
/// assert_eq!(routes.matches("/tasks/42/logs"), None);
/// assert_eq!(routes.matches("/verify/"), None);
/// # Ok::<(), gym_metrics_api::RouteTableError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    routes: Box<[Route]>,
}

impl RouteTable {
    /// A table of `templates`, matched in this order.
    ///
    /// # Errors
    /// A template not starting with `/`, a malformed `{parameter}` segment,
    /// or a template listed twice: [`RouteTableError`] names it.
    ///
    /// ```
    /// use gym_metrics_api::RouteTable;
    /// assert!(RouteTable::new(["/", "/health"]).is_ok());
    /// let e = RouteTable::new(["/tasks/{id"]).unwrap_err();
    /// assert!(e.to_string().contains("malformed parameter"), "{e}");
    /// ```
    pub fn new(templates: impl IntoIterator<Item = &'static str>) -> Result<Self, RouteTableError> {
        let mut routes: Vec<Route> = Vec::new();
        for template in templates {
            let route = parse(template)?;
            if routes.iter().any(|r| r.template == template) {
                return Err(RouteTableError::Duplicate { template });
            }
            routes.push(route);
        }
        Ok(Self {
            routes: routes.into_boxed_slice(),
        })
    }

    /// The first template `path` matches, or `None`.
    ///
    /// ```
    /// let routes = gym_metrics_api::RouteTable::new(["/v1/responses"])?;
    /// assert_eq!(routes.matches("/v1/responses"), Some("/v1/responses"));
    /// assert_eq!(routes.matches("/v1/responses?stream=true"), None); // give the path, not the target
    /// # Ok::<(), gym_metrics_api::RouteTableError>(())
    /// ```
    pub fn matches(&self, path: &str) -> Option<&'static str> {
        self.routes
            .iter()
            .find(|route| route_matches(&route.segments, path))
            .map(|route| route.template)
    }

    /// The templates, in matching order: every value `http.route` can take.
    ///
    /// ```
    /// let routes = gym_metrics_api::RouteTable::new(["/verify", "/health"])?;
    /// assert_eq!(routes.templates().collect::<Vec<_>>(), ["/verify", "/health"]);
    /// # Ok::<(), gym_metrics_api::RouteTableError>(())
    /// ```
    pub fn templates(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.routes.iter().map(|r| r.template)
    }
}

fn parse(template: &'static str) -> Result<Route, RouteTableError> {
    let Some(rest) = template.strip_prefix('/') else {
        return Err(RouteTableError::NotAbsolute { template });
    };
    let segments = rest
        .split('/')
        .map(|segment| {
            let braces = segment.contains(['{', '}']);
            let parameter = segment.len() > 2
                && segment.starts_with('{')
                && segment.ends_with('}')
                && !segment[1..segment.len() - 1].contains(['{', '}', '/']);
            match (braces, parameter) {
                (false, _) => Ok(Segment::Literal(segment)),
                (true, true) => Ok(Segment::Parameter),
                (true, false) => Err(RouteTableError::BadParameter { template, segment }),
            }
        })
        .collect::<Result<Box<[Segment]>, _>>()?;
    Ok(Route { template, segments })
}

fn route_matches(segments: &[Segment], path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let mut parts = rest.split('/');
    for segment in segments {
        let Some(part) = parts.next() else {
            return false;
        };
        let ok = match segment {
            Segment::Literal(literal) => part == *literal,
            Segment::Parameter => !part.is_empty(),
        };
        if !ok {
            return false;
        }
    }
    parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_whole_templates() {
        let t = RouteTable::new(["/", "/verify", "/tasks/{id}", "/a/{x}/b"]).unwrap();
        assert_eq!(t.matches("/"), Some("/"));
        assert_eq!(t.matches(""), None);
        assert_eq!(t.matches("verify"), None);
        assert_eq!(t.matches("/verify"), Some("/verify"));
        assert_eq!(t.matches("/verifyx"), None);
        assert_eq!(t.matches("//verify"), None);
        assert_eq!(t.matches("/tasks/"), None);
        assert_eq!(t.matches("/tasks/%2F"), Some("/tasks/{id}"));
        assert_eq!(t.matches("/a/1/b"), Some("/a/{x}/b"));
        assert_eq!(t.matches("/a/1/c"), None);
        assert_eq!(t.matches("/a/1/b/"), None);
    }

    #[test]
    fn rejects_bad_tables_and_says_which_template() {
        assert_eq!(
            RouteTable::new(["/x", "/x"]).unwrap_err(),
            RouteTableError::Duplicate { template: "/x" }
        );
        for bad in ["/{}", "/a{id}", "/{id}x", "/{a}{b}", "/}"] {
            assert!(
                matches!(
                    RouteTable::new([bad]),
                    Err(RouteTableError::BadParameter { template, .. }) if template == bad
                ),
                "{bad}"
            );
        }
        let e = RouteTable::new(["health"]).unwrap_err();
        assert!(e.to_string().contains("\"/health\""), "{e}");
    }

    #[test]
    fn empty_table_matches_nothing() {
        assert_eq!(RouteTable::default().matches("/"), None);
    }
}
