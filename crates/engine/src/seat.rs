//! Seats, partnerships and per-seat / per-team containers.

use std::fmt;
use std::ops::{Index, IndexMut};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One of the four seats, clockwise from North.
///
/// North–South and East–West are partners. "Left" of a seat is the next seat
/// clockwise: the deal and the turn move that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    /// Seat 0, partner of South.
    North = 0,
    /// Seat 1, partner of West.
    East = 1,
    /// Seat 2, partner of North.
    South = 2,
    /// Seat 3, partner of East.
    West = 3,
}

impl Seat {
    /// All seats in clockwise order from North.
    pub const ALL: [Seat; 4] = [Seat::North, Seat::East, Seat::South, Seat::West];

    /// The seat with index 0..=3, or `None`.
    pub const fn from_index(index: u8) -> Option<Seat> {
        match index {
            0 => Some(Seat::North),
            1 => Some(Seat::East),
            2 => Some(Seat::South),
            3 => Some(Seat::West),
            _ => None,
        }
    }

    /// Index 0..=3 (North, East, South, West).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The seat to the left (next clockwise).
    pub const fn next(self) -> Seat {
        self.offset(1)
    }

    /// The seat `n` places clockwise from this one.
    pub const fn offset(self, n: u8) -> Seat {
        match (self as u8 + n) % 4 {
            0 => Seat::North,
            1 => Seat::East,
            2 => Seat::South,
            _ => Seat::West,
        }
    }

    /// The partner (the seat opposite).
    pub const fn partner(self) -> Seat {
        self.offset(2)
    }

    /// The partnership this seat belongs to.
    pub const fn team(self) -> Team {
        if (self as u8).is_multiple_of(2) { Team::NorthSouth } else { Team::EastWest }
    }

    /// The English name: "North", "East", …
    pub const fn name(self) -> &'static str {
        match self {
            Seat::North => "North",
            Seat::East => "East",
            Seat::South => "South",
            Seat::West => "West",
        }
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error returned when a seat name cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a seat: {0:?} (expected north, east, south or west)")]
pub struct ParseSeatError(pub String);

impl FromStr for Seat {
    type Err = ParseSeatError;

    /// Accepts the name or its initial, in any case (`"north"`, `"N"`).
    fn from_str(s: &str) -> Result<Seat, ParseSeatError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "north" | "n" | "0" => Ok(Seat::North),
            "east" | "e" | "1" => Ok(Seat::East),
            "south" | "s" | "2" => Ok(Seat::South),
            "west" | "w" | "3" => Ok(Seat::West),
            _ => Err(ParseSeatError(s.chars().take(16).collect())),
        }
    }
}

/// A partnership.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Team {
    /// North and South (team 0).
    NorthSouth = 0,
    /// East and West (team 1).
    EastWest = 1,
}

impl Team {
    /// Both teams, North–South first.
    pub const ALL: [Team; 2] = [Team::NorthSouth, Team::EastWest];

    /// Index 0 (North–South) or 1 (East–West).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The other team.
    pub const fn other(self) -> Team {
        match self {
            Team::NorthSouth => Team::EastWest,
            Team::EastWest => Team::NorthSouth,
        }
    }

    /// The two seats of the team, North or East first.
    pub const fn seats(self) -> [Seat; 2] {
        match self {
            Team::NorthSouth => [Seat::North, Seat::South],
            Team::EastWest => [Seat::East, Seat::West],
        }
    }

    /// The English name: "North–South" or "East–West".
    pub const fn name(self) -> &'static str {
        match self {
            Team::NorthSouth => "North-South",
            Team::EastWest => "East-West",
        }
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Team {
    type Err = ParseSeatError;

    /// Accepts `"north_south"`, `"ns"`, `"east_west"`, `"ew"` (any case,
    /// with `-`, `_` or nothing between).
    fn from_str(s: &str) -> Result<Team, ParseSeatError> {
        let t: String = s.trim().to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphabetic()).collect();
        match t.as_str() {
            "northsouth" | "ns" => Ok(Team::NorthSouth),
            "eastwest" | "ew" => Ok(Team::EastWest),
            _ => Err(ParseSeatError(s.chars().take(16).collect())),
        }
    }
}

/// One value per seat, indexed by [`Seat`]. Serialised as a JSON array in
/// seat order (North, East, South, West).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BySeat<T>(pub [T; 4]);

impl<T> BySeat<T> {
    /// Builds the container by calling `f` for each seat in order.
    pub fn new_with(mut f: impl FnMut(Seat) -> T) -> BySeat<T> {
        BySeat([f(Seat::North), f(Seat::East), f(Seat::South), f(Seat::West)])
    }

    /// The value for `seat`.
    pub fn get(&self, seat: Seat) -> &T {
        &self.0[seat as usize]
    }

    /// The value for `seat`, mutably.
    pub fn get_mut(&mut self, seat: Seat) -> &mut T {
        &mut self.0[seat as usize]
    }

    /// Iterates over `(seat, value)` pairs in seat order.
    pub fn iter(&self) -> impl Iterator<Item = (Seat, &T)> {
        Seat::ALL.into_iter().zip(self.0.iter())
    }

    /// Applies `f` to every value.
    pub fn map<U>(&self, mut f: impl FnMut(Seat, &T) -> U) -> BySeat<U> {
        BySeat::new_with(|seat| f(seat, self.get(seat)))
    }
}

impl<T> Index<Seat> for BySeat<T> {
    type Output = T;
    fn index(&self, seat: Seat) -> &T {
        self.get(seat)
    }
}

impl<T> IndexMut<Seat> for BySeat<T> {
    fn index_mut(&mut self, seat: Seat) -> &mut T {
        self.get_mut(seat)
    }
}

/// One value per team, indexed by [`Team`]. Serialised as a JSON array
/// `[north_south, east_west]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ByTeam<T>(pub [T; 2]);

impl<T> ByTeam<T> {
    /// Builds the container by calling `f` for each team in order.
    pub fn new_with(mut f: impl FnMut(Team) -> T) -> ByTeam<T> {
        ByTeam([f(Team::NorthSouth), f(Team::EastWest)])
    }

    /// The value for `team`.
    pub fn get(&self, team: Team) -> &T {
        &self.0[team as usize]
    }

    /// The value for `team`, mutably.
    pub fn get_mut(&mut self, team: Team) -> &mut T {
        &mut self.0[team as usize]
    }

    /// Iterates over `(team, value)` pairs, North–South first.
    pub fn iter(&self) -> impl Iterator<Item = (Team, &T)> {
        Team::ALL.into_iter().zip(self.0.iter())
    }
}

impl<T> Index<Team> for ByTeam<T> {
    type Output = T;
    fn index(&self, team: Team) -> &T {
        self.get(team)
    }
}

impl<T> IndexMut<Team> for ByTeam<T> {
    fn index_mut(&mut self, team: Team) -> &mut T {
        self.get_mut(team)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_go_clockwise_and_pair_opposite() {
        assert_eq!(Seat::North.next(), Seat::East);
        assert_eq!(Seat::West.next(), Seat::North);
        assert_eq!(Seat::East.partner(), Seat::West);
        assert_eq!(Seat::South.team(), Team::NorthSouth);
        assert_eq!(Seat::West.team(), Team::EastWest);
        assert_eq!(Team::EastWest.seats(), [Seat::East, Seat::West]);
        assert_eq!(Team::NorthSouth.other(), Team::EastWest);
        for seat in Seat::ALL {
            assert_eq!(seat.partner().team(), seat.team());
            assert_ne!(seat.next().team(), seat.team());
            assert_eq!(Seat::from_index(seat.index()), Some(seat));
        }
    }

    #[test]
    fn seat_names_parse() {
        assert_eq!("north".parse::<Seat>(), Ok(Seat::North));
        assert_eq!("W".parse::<Seat>(), Ok(Seat::West));
        assert!("middle".parse::<Seat>().is_err());
        assert_eq!("North-South".parse::<Team>(), Ok(Team::NorthSouth));
        assert_eq!("ew".parse::<Team>(), Ok(Team::EastWest));
        assert!("both".parse::<Team>().is_err());
        assert_eq!(serde_json::to_string(&Seat::East).unwrap(), "\"east\"");
        assert_eq!(serde_json::to_string(&Team::EastWest).unwrap(), "\"east_west\"");
        assert_eq!(serde_json::to_string(&BySeat([1, 2, 3, 4])).unwrap(), "[1,2,3,4]");
    }
}
